package tests

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type pushResult struct {
	Remote      string   `json:"remote"`
	Machine     string   `json:"machine"`
	Agent       string   `json:"agent"`
	Ref         string   `json:"ref"`
	Checkpoints []string `json:"checkpoints"`
	Records     int      `json:"records"`
	Deleted     []string `json:"deleted"`
}

type fetchResult struct {
	Remote string `json:"remote"`
	Copies []struct {
		Copy        string   `json:"copy"`
		Machine     string   `json:"machine"`
		Agent       string   `json:"agent"`
		Checkpoints []string `json:"checkpoints"`
	} `json:"copies"`
	Refused []struct {
		Ref    string `json:"ref"`
		Reason string `json:"reason"`
	} `json:"refused"`
	Deleted []string `json:"deleted"`
}

// bareRemote makes an empty bare repository in the test's folder.
func (e *Env) bareRemote(name string) string {
	e.t.Helper()
	dir := filepath.Join(e.Root, name+".git")
	e.Git("init", "-q", "--bare", dir)
	return dir
}

// refsOf lists name=oid of the refs under prefix, in git dir dir ("" for
// the env's repository), with plain git.
func (e *Env) gitRefs(dir, prefix string) map[string]string {
	e.t.Helper()
	args := []string{"for-each-ref", "--format=%(refname) %(objectname)", prefix}
	if dir != "" {
		args = append([]string{"--git-dir=" + dir}, args...)
	}
	out := e.Git(args...)
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if name, oid, ok := strings.Cut(line, " "); ok {
			m[name] = oid
		}
	}
	return m
}

func (e *Env) machine() string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.StateDir(), "source"))
	require.NoError(e.t, err)
	return strings.TrimSpace(string(b))
}

// TestShare_PushAndFetchThroughABareRemote: an agent's checkpoints and log
// records go to a bare remote only when pushed, under the machine's
// namespace; a second clone fetches them, checked, under
// refs/venom/remotes/<remote>/, and nothing reaches its own checkpoints.
func TestShare_PushAndFetchThroughABareRemote(t *testing.T) {
	t.Parallel()
	a := NewEnv(t)
	remote := a.bareRemote("remote")
	a.Git("remote", "add", "origin", remote)
	a.TurnN("a1", 1)
	a.TurnN("a1", 2)
	a.Git("push", "-q", "origin", "main")
	// Never automatic: a plain push sends no checkpoint.
	assert.Empty(t, a.gitRefs(remote, "refs/venom"))

	var pushed pushResult
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t).JSON(t, &pushed)
	m := a.machine()
	local := a.gitRefs("", "refs/venom/checkpoints/a1/")
	var ks []string
	for n := 1; n <= len(local); n++ {
		ks = append(ks, "k"+strconv.Itoa(n))
	}
	require.Len(t, ks, 3)
	assert.Equal(t, pushResult{Remote: "origin", Machine: m, Agent: "a1", Ref: "refs/venom/shared/" + m + "/a1/",
		Checkpoints: ks, Records: pushed.Records, Deleted: []string{}}, pushed)
	there := a.gitRefs(remote, "refs/venom")
	for n := 1; n <= len(ks); n++ {
		assert.Equal(t, local["refs/venom/checkpoints/a1/"+strconv.Itoa(n)], there["refs/venom/shared/"+m+"/a1/"+strconv.Itoa(n)])
	}
	assert.Len(t, there, len(ks)+1)
	// The log copy is a commit of one file, the agent's records from seq 1.
	logRef := "refs/venom/shared/" + m + "/a1/log"
	assert.Equal(t, "log.jsonl", a.Git("--git-dir="+remote, "ls-tree", "--name-only", logRef))
	lines := strings.Split(a.Git("--git-dir="+remote, "show", logRef+":log.jsonl"), "\n")
	assert.Equal(t, pushed.Records, len(lines))
	for i, line := range lines {
		var rec struct {
			Seq   int    `json:"seq"`
			Agent string `json:"agent"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		assert.Equal(t, i+1, rec.Seq)
		assert.Equal(t, "a1", rec.Agent)
	}

	// Another clone fetches them.
	b := NewBareEnv(t)
	b.Git("remote", "add", "origin", remote)
	b.Git("fetch", "-q", "origin")
	b.Git("checkout", "-q", "-B", "main", "origin/main")
	var got fetchResult
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	require.Len(t, got.Copies, 1)
	assert.Equal(t, "origin/"+m+"/a1", got.Copies[0].Copy)
	assert.Equal(t, ks, got.Copies[0].Checkpoints)
	assert.Empty(t, got.Refused)
	copies := b.gitRefs("", "refs/venom")
	assert.Len(t, copies, len(ks)+1)
	for n := 1; n <= len(ks); n++ {
		assert.Equal(t, local["refs/venom/checkpoints/a1/"+strconv.Itoa(n)], copies["refs/venom/remotes/origin/"+m+"/a1/"+strconv.Itoa(n)])
	}
	assert.Equal(t, there[logRef], copies["refs/venom/remotes/origin/"+m+"/a1/log"])
	// The fetched trees are whole: git reads a copy's file.
	assert.Equal(t, "turn 2", b.Git("show", "refs/venom/remotes/origin/"+m+"/a1/3:turn-a1.txt"))
	assert.NoFileExists(t, filepath.Join(b.StateDir(), "log.jsonl"))

	// list and git venom-diff read a copy by its id.
	cp := "origin/" + m + "/a1"
	var l ListResult
	b.Venom("checkpoint", "list", "--agent="+cp, "--json").OK(t).JSON(t, &l)
	assert.Equal(t, cp, l.Agent)
	var listed []string
	for _, it := range l.Checkpoints {
		listed = append(listed, it.Checkpoint)
		n := strings.TrimPrefix(it.Checkpoint, "k")
		assert.Equal(t, copies["refs/venom/remotes/origin/"+m+"/a1/"+n], it.Repos[0].Commit)
	}
	assert.Equal(t, []string{"k3", "k2", "k1"}, listed)
	diff := b.Venom("diff", "--agent="+cp, "k1", "k3").OK(t).Stdout
	plain := b.Git("diff", copies["refs/venom/remotes/origin/"+m+"/a1/1"], copies["refs/venom/remotes/origin/"+m+"/a1/3"])
	assert.True(t, strings.HasSuffix(strings.TrimSpace(diff), plain), "%s\n---\n%s", diff, plain)
	// A copy whose log ref was changed here is checked again, and refused.
	b.Git("update-ref", "refs/venom/remotes/origin/"+m+"/a1/log", copies["refs/venom/remotes/origin/"+m+"/a1/1"])
	b.Venom("checkpoint", "list", "--agent="+cp, "--json").Fails(t, 1, "failed.state")
	b.Git("update-ref", "refs/venom/remotes/origin/"+m+"/a1/log", copies["refs/venom/remotes/origin/"+m+"/a1/log"])

	// A prune on A and a second push remove what is no longer live; the
	// next fetch removes it here too.
	a.SetGlobal("venom.keep", "1")
	a.Venom("checkpoint", "prune", "--agent=a1").OK(t)
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t).JSON(t, &pushed)
	assert.NotEmpty(t, pushed.Deleted)
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	assert.NotEmpty(t, got.Deleted)
	after := b.gitRefs("", "refs/venom")
	for _, ck := range got.Copies[0].Checkpoints {
		n := strings.TrimPrefix(ck, "k")
		assert.Contains(t, after, "refs/venom/remotes/origin/"+m+"/a1/"+n)
	}
	assert.Len(t, after, len(got.Copies[0].Checkpoints)+1)

	// doctor still warns about a mirror remote, push or fetch aside.
	b.Git("config", "remote.origin.mirror", "true")
	var rep doctorReport
	b.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["checkpoints.mirror"])
}

// TestShare_ConfigGitFailureIsNotAMissingRemote: push and fetch asked
// git config for the remote's URL and read any failure as "no remote is
// configured" (invalid_params.remote), a false report when git itself
// failed. Only exit 1 means the key is not set; any other failure is
// failed.remote with git's words, and nothing is sent or written.
func TestShare_ConfigGitFailureIsNotAMissingRemote(t *testing.T) {
	t.Parallel()
	a := NewEnv(t)
	remote := a.bareRemote("remote")
	a.TurnN("a1", 1)
	a.Venom("checkpoint", "push", "--agent=a1", "--json").Fails(t, 2, "invalid_params.remote")
	a.Git("remote", "add", "origin", remote)

	// A git whose config --get fails as on a config it cannot read: git
	// puts its exec path first on the PATH it gives git venom-checkpoint.
	gitExec := a.Git("--exec-path")
	execPath := filepath.Join(a.Root, "failing-config-exec-path")
	require.NoError(t, os.MkdirAll(execPath, 0o755))
	script := "#!/bin/sh\nGIT_EXEC_PATH=" + gitExec + "; export GIT_EXEC_PATH\n" +
		"case \"$*\" in *config*--get*remote.*) echo 'fatal: unable to read config' >&2; exit 128;; esac\n" +
		"exec " + filepath.Join(gitExec, "git") + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(execPath, "git"), []byte(script), 0o755))
	failing := []string{"GIT_EXEC_PATH=" + execPath}
	for _, verb := range []string{"push", "fetch"} {
		args := []string{verb}
		if verb == "push" {
			args = append(args, "--agent=a1")
		}
		r := a.VenomIn(a.Dir, failing, "checkpoint", append(args, "--json")...).Fails(t, 1, "failed.remote")
		assert.Contains(t, r.Stdout, `"step":"config"`, verb)
		assert.NotContains(t, r.Stdout, "no remote", verb)
		human := a.VenomIn(a.Dir, failing, "checkpoint", args...)
		assert.Equal(t, 1, human.Code, verb)
		assert.Contains(t, human.Stderr, "unable to read config", verb)
	}
	assert.Empty(t, a.gitRefs(remote, "refs/venom"), "nothing was pushed")
	assert.Empty(t, a.gitRefs("", "refs/venom/remotes"), "nothing was fetched")
	// With git whole again, the same push goes through.
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
	assert.NotEmpty(t, a.gitRefs(remote, "refs/venom"))
}

// TestShare_HostileRemote: a remote shaped by an attacker gets nothing
// past the checks: no ref outside refs/venom/remotes/<remote>/, nothing
// in refs/venom/checkpoints, no record in the log, and each refused ref is
// named with its reason.
func TestShare_HostileRemote(t *testing.T) {
	t.Parallel()
	a := NewEnv(t)
	good := a.bareRemote("good")
	a.Git("remote", "add", "good", good)
	a.TurnN("a1", 1)
	a.Venom("checkpoint", "push", "good", "--agent=a1", "--json").OK(t)
	m := a.machine()
	k1 := a.Git("rev-parse", "refs/venom/checkpoints/a1/1")
	genuineLog := a.Git("--git-dir="+good, "show", "refs/venom/shared/"+m+"/a1/log:log.jsonl") + "\n"

	evil := a.bareRemote("evil")
	a.Git("remote", "add", "evil", evil)
	fake := "11111111-2222-3333-4444-555555555555"
	// forge makes a commit of tree with the message, as an attacker would.
	forge := func(tree, msg string) string {
		return a.Git("commit-tree", tree, "-m", msg)
	}
	file := a.GitInput("x\n", "hash-object", "-w", "--stdin")
	tree := a.GitInput("100644 blob "+file+"\tx\n", "mktree")
	logCommit := func(log string) string {
		b := a.GitInput(log, "hash-object", "-w", "--stdin")
		return forge(a.GitInput("100644 blob "+b+"\tlog.jsonl\n", "mktree"), "venom log")
	}
	trailers := func(agent, id string) string {
		return "venom checkpoint\n\nVenom-Agent: " + agent + "\nVenom-Checkpoint: " + id + "\nVenom-Reason: manual\n"
	}
	push := func(oid, ref string) { a.Git("push", "-q", "--force", "evil", oid+":"+ref) }
	// 1. The genuine agent, but one checkpoint's trailers name another agent.
	push(k1, "refs/venom/shared/"+m+"/a1/1")
	push(forge(tree, trailers("a2", "k2")), "refs/venom/shared/"+m+"/a1/2")
	// 2. A checkpoint the log copy never recorded.
	push(forge(tree, trailers("a1", "k3")), "refs/venom/shared/"+m+"/a1/3")
	push(logCommit(genuineLog), "refs/venom/shared/"+m+"/a1/log")
	// 3. Another machine's agent whose log copy is sound.
	push(logCommit(strings.ReplaceAll(genuineLog, `"agent":"a1"`, `"agent":"b1"`)), "refs/venom/shared/"+fake+"/b1/log")
	// 4. A log copy holding another agent's record.
	push(k1, "refs/venom/shared/"+fake+"/c1/1")
	push(logCommit(strings.Replace(genuineLog, `"agent":"a1"`, `"agent":"zz"`, 1)), "refs/venom/shared/"+fake+"/c1/log")
	// 5. Names a push never makes, and refs outside the shared namespace.
	push(k1, "refs/venom/shared/"+fake+"/a1/01")
	push(k1, "refs/venom/shared/"+fake+"/A1/1")
	push(k1, "refs/venom/shared/not-a-machine/a1/1")
	push(k1, "refs/venom/shared/"+fake+"/a1/1/extra")
	push(k1, "refs/venom/checkpoints/a1/9")
	push(k1, "refs/heads/main")

	b := NewEnv(t)
	b.Git("remote", "add", "evil", evil)
	b.TurnN("b0", 1)
	snap := b.Snapshot()
	logBefore := b.LogRecords()
	before := b.gitRefs("", "refs")
	var got fetchResult
	b.Venom("checkpoint", "fetch", "evil", "--json").OK(t).JSON(t, &got)
	refused := map[string]string{}
	for _, r := range got.Refused {
		refused[r.Ref] = r.Reason
	}
	assert.Equal(t, map[string]string{
		"refs/venom/shared/" + m + "/a1/2":          "trailers",
		"refs/venom/shared/" + m + "/a1/3":          "unlogged",
		"refs/venom/shared/" + fake + "/c1/log":     "log",
		"refs/venom/shared/" + fake + "/a1/01":      "name",
		"refs/venom/shared/" + fake + "/A1/1":       "name",
		"refs/venom/shared/not-a-machine/a1/1":      "name",
		"refs/venom/shared/" + fake + "/a1/1/extra": "name",
	}, refused)
	// Only the genuine checkpoint and the logs that passed are written.
	after := b.gitRefs("", "refs")
	var added []string
	for name := range after {
		if _, ok := before[name]; !ok {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	want := []string{
		"refs/venom/remotes/evil/" + fake + "/b1/log",
		"refs/venom/remotes/evil/" + m + "/a1/1",
		"refs/venom/remotes/evil/" + m + "/a1/log",
	}
	sort.Strings(want)
	assert.Equal(t, want, added)
	for name, oid := range before {
		assert.Equal(t, oid, after[name], name)
	}
	assert.Equal(t, logBefore, b.LogRecords())
	b.AssertUntouched(t, snap)

	// A remote whose objects git's fsck refuses (a tree entry "..", made
	// as an attacker would) fails the fetch as a whole, and
	// writes nothing.
	rawFile, err := hex.DecodeString(file)
	require.NoError(t, err)
	rawTree, err := hex.DecodeString(tree)
	require.NoError(t, err)
	dots := a.GitInput("40000 ..\x00"+string(rawTree)+"100644 zz\x00"+string(rawFile), "hash-object", "-w", "-t", "tree", "--literally", "--stdin")
	worse := a.bareRemote("worse")
	a.Git("push", "-q", worse, forge(dots, trailers("a1", "k1"))+":refs/venom/shared/"+fake+"/a1/1")
	b.Git("remote", "add", "worse", worse)
	b.Venom("checkpoint", "fetch", "worse", "--json").Fails(t, 1, "failed.remote")
	assert.Equal(t, after, b.gitRefs("", "refs"))
}

// GitInput runs git with stdin and returns its trimmed stdout.
func (e *Env) GitInput(stdin string, args ...string) string {
	e.t.Helper()
	r := e.runInput(e.Dir, nil, stdin, "git", args...)
	require.Equal(e.t, 0, r.Code, "git %v: %s", args, r.Stderr)
	return strings.TrimSpace(r.Stdout)
}

// TestShare_DoctorWarnsAboutRefspecsCoveringCheckpoints: besides mirror,
// a push refspec that sends refs/venom/checkpoints/ and a fetch refspec
// that writes into it (a remote could place checkpoint refs here) warn,
// with fixes that work; push and fetch themselves configure neither.
func TestShare_DoctorWarnsAboutRefspecsCoveringCheckpoints(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1)
	env.Git("remote", "add", "origin", env.bareRemote("origin"))
	env.Venom("checkpoint", "push", "--agent=a1").OK(t)
	env.Venom("checkpoint", "fetch").OK(t)
	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["checkpoints.mirror"])

	env.Git("config", "--add", "remote.origin.push", "refs/heads/*:refs/heads/*")
	env.Git("config", "--add", "remote.origin.push", "refs/venom/*:refs/venom/*")
	env.Git("remote", "add", "other", env.bareRemote("other"))
	env.Git("config", "--add", "remote.other.fetch", "+refs/*:refs/*")
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["checkpoints.mirror"])
	msg, fix := rep.check(t, "checkpoints.mirror")
	assert.Contains(t, msg, "remote origin pushes refs/venom/checkpoints/")
	assert.Contains(t, msg, "remote other fetches into refs/venom/checkpoints/")
	assert.NotContains(t, msg, "refs/heads/*:refs/heads/*")
	sh := exec.Command("sh", "-c", fix)
	sh.Dir, sh.Env = env.Dir, env.Environ()
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "refs/heads/*:refs/heads/*", env.Git("config", "--get-all", "remote.origin.push"))
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["checkpoints.mirror"])
}
