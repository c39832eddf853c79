package tests

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A remote is anyone's: what a fetch brings is shaped by an attacker who
// can push there. These tests shape it as such an attacker would (a log
// copy rewritten record by record, forged commits) and run the suite's
// commands on the copy.

// sharedCopy is a machine A whose agent a1 took turns and pushed them to
// a bare remote, and the machine id of its namespace there.
type sharedCopy struct {
	a       *Env
	remote  string
	machine string
}

func newSharedCopy(t *testing.T, turns int) *sharedCopy {
	t.Helper()
	a := NewEnv(t)
	remote := a.bareRemote("remote")
	a.Git("remote", "add", "origin", remote)
	for n := 1; n <= turns; n++ {
		a.TurnN("a1", n)
	}
	a.Git("push", "-q", "origin", "main")
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
	return &sharedCopy{a: a, remote: remote, machine: a.machine()}
}

// logRef is the agent's log ref on the remote.
func (c *sharedCopy) logRef(agent string) string {
	return "refs/venom/shared/" + c.machine + "/" + agent + "/log"
}

// forgeLog replaces the remote's log copy of a1 by each record through
// edit (nil drops it), as a commit of one file log.jsonl, as push makes it.
func (c *sharedCopy) forgeLog(t *testing.T, edit func(rec map[string]any) map[string]any) {
	t.Helper()
	a := c.a
	var out strings.Builder
	for _, line := range strings.Split(a.Git("--git-dir="+c.remote, "show", c.logRef("a1")+":log.jsonl"), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec = edit(rec); rec == nil {
			continue
		}
		b, err := json.Marshal(rec)
		require.NoError(t, err)
		out.Write(b)
		out.WriteByte('\n')
	}
	blob := a.GitInput(out.String(), "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	tree := a.GitInput("100644 blob "+blob+"\tlog.jsonl\n", "--git-dir="+c.remote, "mktree")
	commit := a.Git("--git-dir="+c.remote, "commit-tree", tree, "-m", "venom log a1")
	a.Git("--git-dir="+c.remote, "update-ref", c.logRef("a1"), commit)
}

// fetcher is a second clone of the remote that fetched the copies.
func (c *sharedCopy) fetcher(t *testing.T) (*Env, string) {
	t.Helper()
	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	var got fetchResult
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	require.Len(t, got.Copies, 1, "%+v", got)
	return b, got.Copies[0].Copy
}

// TestSecurity_ShareCopyTimesQuoted: a fetched log copy's checkpoint
// times are free text the remote chose; list printed one that does not
// parse as a time raw in its AGE column, so a remote could set the
// window title, clear the screen or forge rows of the table.
func TestSecurity_ShareCopyTimesQuoted(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 2)
	c.forgeLog(t, func(rec map[string]any) map[string]any {
		if rec["type"] == "checkpoint.taken" {
			rec["at"] = "\033]0;pwned\007\033[2J\r\nk9  turn_end  t9  0s  3  forged"
			rec["ts"] = "\033[31m"
		}
		return rec
	})
	b, cp := c.fetcher(t)
	list := b.Venom("checkpoint", "list", "--agent="+cp).OK(t)
	assertNoControls(t, "list of a fetched copy", list.Stdout)
	assert.Len(t, strings.Split(strings.TrimSuffix(list.Stdout, "\n"), "\n"), 4, "a header and three rows, none forged:\n%s", list.Stdout)
	// The same holds for this repository's own log, which anyone who can
	// write the state folder shapes.
	b.TurnN("b1", 1)
	log := filepath.Join(b.StateDir(), "log.jsonl")
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	forged := regexp.MustCompile(`"at":"[^"]*"`).ReplaceAll(raw, []byte(`"at":"\u001b]0;pwned\u0007"`))
	require.NotEqual(t, raw, forged)
	require.NoError(t, os.WriteFile(log, forged, 0o644))
	own := b.Venom("checkpoint", "list", "--agent=b1").OK(t).Stdout
	assertNoControls(t, "list", own)
	assert.Contains(t, own, `"\033]0;pwned\a"`)
}

// TestSecurity_ShareCopyLogPathsChecked: a fetched log's paths are checked
// in the form their readers take them. A skipped path's exact bytes
// (path_b64, which the plan reads in place of the text beside it) passed
// unchecked, so "../" reached a copy's fold; and a rollback's stored
// pathspecs were checked as plain paths, so the log of every agent that
// rolled a folder back (":(top)docs/") was refused.
func TestSecurity_ShareCopyLogPathsChecked(t *testing.T) {
	t.Parallel()
	a := NewEnv(t)
	remote := a.bareRemote("remote")
	a.Git("remote", "add", "origin", remote)
	a.Write("docs/x.md", "x k1\n")
	a.Commit("docs")
	a.Turn("a1", func() { a.Write("docs/x.md", "x k2\n") })
	a.Rollback("--agent=a1", "k1", "--path=docs/")
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
	c := &sharedCopy{a: a, remote: remote, machine: a.machine()}
	b, _ := c.fetcher(t)
	logRef := "refs/venom/remotes/origin/" + c.machine + "/a1/log"
	assert.Contains(t, b.gitRefs("", "refs/venom/remotes/"), logRef, "a genuine path-scoped rollback's log is fetched")

	refused := func(what string, edit func(rec map[string]any) map[string]any) {
		t.Helper()
		c.forgeLog(t, edit)
		var got fetchResult
		b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
		require.Len(t, got.Refused, 1, "%s: %+v", what, got)
		assert.Equal(t, c.logRef("a1"), got.Refused[0].Ref, what)
		assert.Equal(t, "log", got.Refused[0].Reason, what)
		assert.NotContains(t, b.gitRefs("", "refs/venom/remotes/"), logRef, what)
		a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t) // the genuine log again
	}
	out := base64.StdEncoding.EncodeToString([]byte("../../outside/precious"))
	refused("a skipped path's bytes", func(rec map[string]any) map[string]any {
		if rec["type"] == "checkpoint.taken" {
			repo := rec["repos"].([]any)[0].(map[string]any)
			repo["skipped"] = []any{map[string]any{"path": "fine.txt", "path_b64": out, "bytes": 1, "reason": "too_big"}}
		}
		return rec
	})
	refused("a gitlink's bytes", func(rec map[string]any) map[string]any {
		if rec["type"] == "checkpoint.taken" {
			repo := rec["repos"].([]any)[0].(map[string]any)
			repo["submodules"] = []any{map[string]any{"path": "sub", "path_b64": base64.StdEncoding.EncodeToString([]byte(".git/hooks")),
				"commit": strings.Repeat("1", 40), "dirty": false}}
		}
		return rec
	})
	refused("a rollback's pathspec", func(rec map[string]any) map[string]any {
		if rec["type"] == "rollback.started" {
			rec["paths"] = []any{":(top)../outside/"}
		}
		return rec
	})
}

// TestSecurity_ShareBigLogCopyKeepsNoRecords: a remote fills a log copy up
// to the 64 MiB cap with small records. fetch and list held every record
// of it at once, each the size of the union of all record types: 60 MiB
// took 1.2 GB of memory (and a minute and more of a collector fighting
// the soft limit). They now check and fold the copy as it is read, and
// git writes the blob out for that read as it reads it: no copy of it is
// ever whole in the command.
func TestSecurity_ShareBigLogCopyKeepsNoRecords(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	a := c.a
	var log strings.Builder
	log.WriteString(a.Git("--git-dir="+c.remote, "show", c.logRef("a1")+":log.jsonl") + "\n")
	seq := strings.Count(log.String(), "\n")
	for log.Len() < 32<<20 {
		seq++
		fmt.Fprintf(&log, `{"seq":%d,"ts":"2026-01-01T00:00:00.000Z","type":"x","agent":"a1"}`+"\n", seq)
	}
	blob := a.GitInput(log.String(), "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	tree := a.GitInput("100644 blob "+blob+"\tlog.jsonl\n", "--git-dir="+c.remote, "mktree")
	a.Git("--git-dir="+c.remote, "update-ref", c.logRef("a1"), a.Git("--git-dir="+c.remote, "commit-tree", tree, "-m", "venom log a1"))

	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	// The largest resident set of the command itself (peakRSS).
	maxRSS := func(args ...string) int64 {
		t.Helper()
		peak := newPeakRSS(t)
		cmd := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), args...)
		cmd.Dir, cmd.Env = b.Dir, append(b.Environ(), peak.Env())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return peak.Bytes()
	}
	// What the binary takes to start, and 24 MiB: a whole copy of the
	// 32 MiB log is over it. Streamed, fetch and list take 13 MiB more
	// than --version; with the blob read whole by libgit2 and copied
	// whole into Go, 78 MiB more.
	limit := maxRSS("--version") + 24<<20
	assert.Less(t, maxRSS("fetch", "--json"), limit, "fetch")
	cp := "origin/" + c.machine + "/a1"
	assert.Less(t, maxRSS("list", "--agent="+cp, "--json"), limit, "list")
	var l ListResult
	b.Venom("checkpoint", "list", "--agent="+cp, "--json").OK(t).JSON(t, &l)
	assert.Len(t, l.Checkpoints, 2)
}

// TestSecurity_ShareCopyRollbackKeepsThePersonsWork: my own work in my
// guarded tree from before my agent came (an edit of base.txt, an
// untracked notes.txt) lies in a gap no turn of the agent covers, so a
// rollback of a fetched copy's checkpoint recorded under that agent
// classes it outside: refused, not overwritten and deleted.
func TestSecurity_ShareCopyRollbackKeepsThePersonsWork(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	b, cp := p.b, p.copyID
	b.Write("base.txt", "my precious edit\n")
	b.Write("notes.txt", "my notes\n")
	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })
	snap := b.Snapshot()

	refused := b.Venom("rollback", "--agent="+cp, "k3", "--into=me", "--dry-run", "--json")
	refused.Fails(t, 5, "conflict.outside_edits")
	assert.Contains(t, refused.Stdout, "base.txt")
	assert.Contains(t, refused.Stdout, "notes.txt")

	// Kept, they stay as they are; the agent's own file goes back.
	var dry struct {
		Plan  string `json:"plan"`
		Repos []struct {
			Files []struct{ Path, Change, Class string } `json:"files"`
			Left  []struct{ Path, Reason string }        `json:"left"`
		} `json:"repos"`
	}
	b.Venom("rollback", "--agent="+cp, "k3", "--into=me", "--outside=keep", "--dry-run", "--json").OK(t).JSON(t, &dry)
	classes, left := map[string]string{}, map[string]string{}
	for _, f := range dry.Repos[0].Files {
		classes[f.Path] = f.Class
	}
	for _, l := range dry.Repos[0].Left {
		left[l.Path] = l.Reason
	}
	assert.Equal(t, "outside", left["base.txt"])
	assert.Equal(t, "outside", left["notes.txt"])
	assert.Equal(t, "turn", classes["mine.txt"])
	b.Venom("rollback", "--agent="+cp, "k3", "--into=me", "--outside=keep", "--plan="+dry.Plan, "--json").OK(t)
	assert.Equal(t, "my precious edit\n", b.Read("base.txt"))
	assert.Equal(t, "my notes\n", b.Read("notes.txt"))
	assert.NoFileExists(t, b.Path("mine.txt"))
	now := b.Snapshot()
	now.Files = snap.Files
	assert.Equal(t, snap, now, "HEAD, the branch and the index stay")
}
