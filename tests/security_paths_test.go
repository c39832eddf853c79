package tests

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A checkpoint tree, or a folder swapped for a
// link, never makes a rollback reach outside the work tree or into .git.

// guarded is what no rollback may change: the outside folder and .git/config.
type guarded struct{ outside, config string }

func (e *Env) guard(outside string) guarded {
	e.t.Helper()
	common := e.CommonDir()
	return guarded{treeHash(outside), fileHash(filepath.Join(common, "config"))}
}

func (e *Env) assertGuarded(before guarded, outside string) {
	e.t.Helper()
	after := e.guard(outside)
	if before.outside != after.outside {
		var list []string
		_ = filepath.Walk(outside, func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				b, _ := os.ReadFile(p)
				list = append(list, fmt.Sprintf("%s %v %q", p, fi.Mode(), b))
			}
			return nil
		})
		e.t.Fatalf("a file outside the work tree changed; it holds:\n%s", strings.Join(list, "\n"))
	}
	require.Equal(e.t, before.config, after.config, ".git/config changed")
}

// literalTree writes, with git hash-object --literally (which checks no
// name), the tree README.md + the chain of folders comps[:len-1] ending in
// the file comps[len-1] (of mode leaf): ["zz", "..", "..", "outside", "victim"].
func (e *Env) literalTree(leaf string, comps ...string) string {
	e.t.Helper()
	blob := e.hashObject("blob", "owned\n")
	id, mode := blob, leaf
	for i := len(comps) - 1; i >= 1; i-- {
		id = e.hashObject("tree", treeEntry(mode, comps[i], id))
		mode = "40000"
	}
	// The top holds README.md too, as a capture would, in git's order.
	readme := treeEntry("100644", "README.md", e.Git("rev-parse", "HEAD:README.md"))
	first := treeEntry(mode, comps[0], id)
	if comps[0] < "README.md" {
		return e.hashObject("tree", first+readme)
	}
	return e.hashObject("tree", readme+first)
}

func treeEntry(mode, name, hexID string) string {
	raw, err := hex.DecodeString(hexID)
	if err != nil {
		panic(err)
	}
	return mode + " " + name + "\x00" + string(raw)
}

func (e *Env) hashObject(typ, content string) string {
	e.t.Helper()
	r := e.runInput(e.Dir, nil, content, "git", "hash-object", "-t", typ, "--literally", "-w", "--stdin")
	require.Equal(e.t, 0, r.Code, r.Stderr)
	return strings.TrimSpace(r.Stdout)
}

// forgedCheckpoint commits tree with venom's trailers, as the issue's
// attacker does, and places it at refs/venom/checkpoints/<agent>/<n>.
func (e *Env) forgedCheckpoint(agent string, n int, reason, tree string) string {
	e.t.Helper()
	msg := fmt.Sprintf("venom checkpoint %s/k%d\n\nVenom-Agent: %s\nVenom-Checkpoint: k%d\nVenom-Reason: %s\n",
		agent, n, agent, n, reason)
	commit := e.Git("commit-tree", tree, "-p", "HEAD", "-m", msg)
	e.Git("update-ref", fmt.Sprintf("refs/venom/checkpoints/%s/%d", agent, n), commit)
	return commit
}

// requireNotAdopted: no log record names the commit.
func (e *Env) requireNotAdopted(commit string) {
	e.t.Helper()
	for _, r := range e.Records("checkpoint.taken") {
		require.NotContains(e.t, jsonOf(e.t, r), commit, "a forged ref was adopted")
	}
}

// escapes are the two paths out of the tree.
var escapes = map[string][]string{
	"outside":    {"zz", "..", "..", "outside", "victim"},
	"git_config": {"zz", "..", ".git", "config"},
}

// TestSecurity_ForgedRefNeverAdopted is the attack 1 up to the
// adoption: a ref at the agent's first number before its first capture,
// and at a later free number, holding `zz/../../outside/victim` or
// `zz/../.git/config`, or carrying a reason no capture writes, is skipped
// as a foreign ref is; doctor names the refs with unsafe trees.
func TestSecurity_ForgedRefNeverAdopted(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := env.Outside(precious("victim"))
	before := env.guard(outside)
	first := env.forgedCheckpoint("a1", 1, "turn_end", env.literalTree("100644", escapes["outside"]...))
	env.TurnN("a1", 1) // k2 and k3: the ref at 1 is skipped
	env.requireNotAdopted(first)
	env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--dry-run", "--json").Fails(t, 3, "not_found.checkpoint")

	later := env.forgedCheckpoint("a1", 4, "turn_end", env.literalTree("100644", escapes["git_config"]...))
	badReason := env.forgedCheckpoint("a1", 5, "turn_end\x1b]0;owned\x07", env.Git("rev-parse", "HEAD^{tree}"))
	unknownReason := env.forgedCheckpoint("a1", 6, "handed_over", env.Git("rev-parse", "HEAD^{tree}"))
	env.TurnN("a1", 2)
	for _, c := range []string{later, badReason, unknownReason} {
		env.requireNotAdopted(c)
	}
	var list []map[string]any
	for _, r := range env.Records("checkpoint.taken") {
		list = append(list, map[string]any{"k": r["checkpoint"]})
	}
	// The second turn_start reuses k3 (nothing changed); its turn_end is k7.
	require.Equal(t, []map[string]any{{"k": "k2"}, {"k": "k3"}, {"k": "k7"}}, list)

	var rep doctorReport
	r := env.Venom("checkpoint", "doctor", "--json")
	require.Equal(t, 1, r.Code, r.Stdout+r.Stderr)
	r.JSON(t, &rep)
	require.Equal(t, "fail", rep.status()["checkpoints.paths"])
	msg, fix := rep.check(t, "checkpoints.paths")
	// The first unsafe path of each tree: the ".." folder itself.
	require.Contains(t, msg, `refs/venom/checkpoints/a1/1 ("zz/..": dotdot)`)
	require.Contains(t, msg, `refs/venom/checkpoints/a1/4 ("zz/..": dotdot)`)
	require.NotContains(t, msg, "a1/5")
	require.Contains(t, fix, "git update-ref -d refs/venom/checkpoints/a1/1 "+first)
	env.assertGuarded(before, outside)
}

// TestSecurity_UnsafeCheckpointRefused is attack 1 when the log names the
// forged commit too (a repository tarball carries both): the dry run and
// the real call refuse with failed.checkpoint_unsafe_path before anything
// is written, no safety checkpoint included.
func TestSecurity_UnsafeCheckpointRefused(t *testing.T) {
	t.Parallel()
	type attack struct {
		leaf  string
		comps []string
		rule  string
		path  string // "": the comps joined
	}
	attacks := map[string]attack{
		"outside":    {"100644", escapes["outside"], "dotdot", ""},
		"git_config": {"100644", escapes["git_config"], "dotdot", ""},
		// Beyond the issue: .git's aliases, a .gitmodules link, and a
		// link and a folder of one name (the link leads outside).
		"dotgit_case":     {"100644", []string{".GIT", "config"}, "dotgit", ""},
		"ntfs_short_name": {"100644", []string{"git~1", "config"}, "ntfs_dotgit", ""},
		"hfs_ignorable":   {"100644", []string{".g\u200cit", "config"}, "hfs_dotgit", ""},
		"gitmodules_link": {"120000", []string{".gitmodules"}, "gitmodules_link", ""},
		"duplicate_entry": {"", nil, "duplicate_entry", "l"},
		// An entry of mode 0 passes every name check and reads as absent
		// on both sides of the change; taken for a deletion, it would
		// delete the ignored .env, which no safety checkpoint holds.
		"mode_zero": {"0", []string{".env"}, "mode", ""},
	}
	for name, a := range attacks {
		comps := a.comps
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			outside := env.Outside(precious("victim"))
			env.TurnN("a1", 1) // k1, k2
			env.Write(".gitignore", ".env\n")
			env.Write(".env", "SECRET=1\n") // ignored: no checkpoint holds it
			var tree string
			if comps != nil {
				tree = env.literalTree(a.leaf, comps...)
				a.path = strings.Join(comps, "/")
			} else {
				x := env.hashObject("tree", treeEntry("100644", "x", env.hashObject("blob", "owned\n")))
				tree = env.hashObject("tree", treeEntry("100644", "README.md", env.Git("rev-parse", "HEAD:README.md"))+
					treeEntry("120000", "l", env.hashObject("blob", "../outside"))+treeEntry("40000", "l", x))
			}
			forged := env.forgedCheckpoint("a1", 3, "turn_end", tree)
			rec := env.Records("checkpoint.taken")[1]
			for _, k := range []string{"seq", "ts", "type"} {
				delete(rec, k)
			}
			rec["checkpoint"] = "k3"
			rec["repos"].([]any)[0].(map[string]any)["commit"] = forged
			env.AppendLog("checkpoint.taken", rec)

			before, snap := env.guard(outside), env.Snapshot()
			refs := env.Git("for-each-ref", "refs/venom")
			records := len(env.LogRecords())
			args := []string{"--agent=a1", "--checkpoint=k3", "--restore=files", "--json"}
			r := env.Venom("rollback", append(args, "--dry-run")...).Fails(t, 1, "failed.checkpoint_unsafe_path")
			data := r.Map(t)["error"].(map[string]any)["data"].(map[string]any)
			require.Equal(t, map[string]any{"checkpoint": "k3", "path": a.path, "rule": a.rule}, data)
			env.Venom("rollback", append(args, "--plan=p1-0123456789abcdef")...).Fails(t, 1, "failed.checkpoint_unsafe_path")
			human := env.Venom("rollback", "--agent=a1", "--checkpoint=k3", "--restore=files", "--dry-run")
			require.Equal(t, 1, human.Code)
			require.Contains(t, human.Stderr, "error: failed.checkpoint_unsafe_path:")

			env.AssertUntouched(t, snap)
			env.assertGuarded(before, outside)
			require.Equal(t, refs, env.Git("for-each-ref", "refs/venom"), "a safety checkpoint was made")
			require.Len(t, env.LogRecords(), records, "the log grew")
		})
	}
}

// startResumable starts a venom command that pauses at a testhook point;
// it returns once the command is there, with a function that lets it go
// on and waits for its end.
func (e *Env) startResumable(point, cmd string, args ...string) func() Result {
	e.t.Helper()
	p := e.pause(point, []string{"VENOM_TEST_PAUSE_RESUME=1"}, cmd, args...)
	return func() Result {
		require.NoError(e.t, os.Remove(p.file))
		select {
		case <-p.done:
		case <-time.After(2 * time.Minute):
			e.t.Fatalf("%s %v did not end after %s", cmd, args, point)
		}
		return Result{Args: args, Stdout: p.out.String(), Stderr: p.errb.String(), Code: p.cmd.ProcessState.ExitCode()}
	}
}

// swapForLink replaces the folder rel with a link to target, keeping the
// folder at Root/moved-<n> (as another process would, with rename).
func (e *Env) swapForLink(rel, target string, n int) {
	e.t.Helper()
	require.NoError(e.t, os.Rename(e.Path(rel), filepath.Join(e.Root, fmt.Sprintf("moved-%d", n))))
	require.NoError(e.t, os.Symlink(target, e.Path(rel)))
}

// endedCleanly: a rollback through swapped folders may fail (undone or
// not) or end exact:false; it never crashes.
func endedCleanly(t *testing.T, r Result) {
	t.Helper()
	require.NotContains(t, r.Stderr, "panic:")
	switch r.Code {
	case 0:
		var res RollbackResult
		r.JSON(t, &res)
		require.NotNil(t, res.Exact)
		require.False(t, *res.Exact, "the tree changed under the rollback, yet it says exact")
	case 1:
		require.Regexp(t, `"code":"failed\.`, r.Stdout)
	default:
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestSecurity_FolderSwappedBeforeDeletions is attack 2: after the real
// call's capture, folder d becomes a link to a folder outside holding the
// same names. The deletions of d/x and d/y must not reach through it.
func TestSecurity_FolderSwappedBeforeDeletions(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := env.Outside(precious("x", "y"))
	env.TurnN("a1", 1) // k1, k2
	env.Turn("a1", func() {
		env.Write("d/x", "agent x\n")
		env.Write("d/y", "agent y\n")
	})
	before := env.guard(outside)
	endedCleanly(t, env.rollbackSwapping("rollback-after-safety", outside))
	env.assertGuarded(before, outside)
}

// rollbackSwapping runs a1's real call back to k2 and, when it reaches
// point, replaces folder d with a link to outside.
func (e *Env) rollbackSwapping(point, outside string) Result {
	e.t.Helper()
	args := []string{"--agent=a1", "--checkpoint=k2", "--restore=files", "--json"}
	plan := e.DryRun(args[:3]...).Plan
	resume := e.startResumable(point, "rollback", append(args, "--plan="+plan)...)
	e.swapForLink("d", outside, 1)
	return resume()
}

// TestSecurity_FolderSwappedBeforeWrites: the same swap just before the
// writes. checkout-index writes into a staging folder; the rename into the
// tree finds d is a link, never follows it, and leaves d/f unwritten.
func TestSecurity_FolderSwappedBeforeWrites(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := env.Outside(precious("g"))
	env.Turn("a1", func() {
		env.Write("d/f", "turn 1\n")
		env.Write("d/g", "turn 1\n")
	}) // k1, k2
	env.Turn("a1", func() { env.Remove("d/f") })
	before := env.guard(outside)
	endedCleanly(t, env.rollbackSwapping("rollback-apply-write", outside))
	env.assertGuarded(before, outside)
	_, err := os.Stat(filepath.Join(outside, "f"))
	require.True(t, os.IsNotExist(err), "the write went through the link")
	target, err := os.Readlink(env.Path("d"))
	require.NoError(t, err, "d is no longer the link")
	require.Equal(t, outside, target)
}

// TestSecurity_FolderMovedAwayWhilePlacing: the writes hold a folder of
// the tree open from one of its files to the next (treepath.Held). Folder
// d, whose three files the rollback writes, is renamed out of the tree
// once its first file is placed and a link to a folder outside put in its
// place: the rest go into the folder held (moved-1), never through the
// link; nothing outside changes, d stays the link, and the rollback says
// exact:false (or fails cleanly).
func TestSecurity_FolderMovedAwayWhilePlacing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	names := []string{"a.txt", "b.txt", "c.txt"}
	outside := env.Outside(precious(names...))
	env.Turn("a1", func() {
		for _, f := range names {
			env.Write("d/"+f, "checkpoint "+f+"\n")
		}
	}) // k1, k2
	env.Turn("a1", func() {
		for _, f := range names {
			env.Write("d/"+f, "agent "+f+"\n")
		}
	})
	before := env.guard(outside)
	args := []string{"--agent=a1", "--checkpoint=k2", "--restore=files", "--json"}
	plan := env.DryRun(args[:3]...).Plan
	p := env.pause("rollback-place-each", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback", append(args, "--plan="+plan)...)
	// Paused before d/a.txt: let it be placed, and stop before d/b.txt.
	p.next(t, "its second file")
	require.Equal(t, "checkpoint a.txt\n", env.Read("d/a.txt"), "the first file is placed")
	env.swapForLink("d", outside, 1)
	resumeEvery(t, p)
	r := Result{Stdout: p.out.String(), Stderr: p.errb.String(), Code: p.cmd.ProcessState.ExitCode()}
	t.Logf("exit %d: %s", r.Code, r.Stdout)
	endedCleanly(t, r)
	env.assertGuarded(before, outside)
	target, err := os.Readlink(env.Path("d"))
	require.NoError(t, err, "d is no longer the link")
	require.Equal(t, outside, target)
	if r.Code == 0 {
		moved := filepath.Join(env.Root, "moved-1")
		for _, f := range names[1:] {
			b, err := os.ReadFile(filepath.Join(moved, f))
			require.NoError(t, err)
			require.Equal(t, "checkpoint "+f+"\n", string(b), "%s went into the folder held", f)
		}
	}
}

// TestSecurity_RollbacksRaceFolderSwaps extends the kill -9 and race tests:
// while real calls run their files back and forth (one killed with SIGKILL
// in the middle of its deletions), a swapper keeps replacing the agent's
// folders with links to a folder outside that holds the same names, and
// putting them back. No file outside the tree changes.
func TestSecurity_RollbacksRaceFolderSwaps(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := env.Outside(precious("x", "y", "z"))
	// The swapper swaps top folders only: swapping d1/sub while d1 is a
	// link would make the swapper itself write outside.
	dirs := []string{"d1", "d2", "d3"}
	env.TurnN("a1", 1)
	env.Turn("a1", func() { // k3, k4: the folders
		for _, d := range append(dirs, "d1/sub") {
			env.Write(d+"/x", "agent "+d+"\n")
			env.Write(d+"/y", "agent "+d+"\n")
		}
	})
	before := env.guard(outside)
	moved := func(d string) string { return filepath.Join(env.Root, "moved-"+strings.ReplaceAll(d, "/", "-")) }
	// swapper runs until stop is closed, or 2000 swaps: it stops by itself.
	swapper := func(stop chan struct{}) *sync.WaitGroup {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				d := dirs[i%len(dirs)]
				if fi, err := os.Lstat(env.Path(d)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					_ = os.Remove(env.Path(d))
					_ = os.Rename(moved(d), env.Path(d))
				} else if err == nil && fi.IsDir() && os.Rename(env.Path(d), moved(d)) == nil {
					_ = os.Symlink(outside, env.Path(d))
				}
				time.Sleep(time.Millisecond)
			}
		}()
		return &wg
	}
	// putBack undoes the swaps left when a round ends.
	putBack := func() {
		for _, d := range dirs {
			if fi, err := os.Lstat(env.Path(d)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				require.NoError(t, os.Remove(env.Path(d)))
			}
			if _, err := os.Lstat(env.Path(d)); os.IsNotExist(err) {
				_ = os.Rename(moved(d), env.Path(d))
			}
			require.NoError(t, os.RemoveAll(moved(d)))
		}
	}
	planFor := func(target string) []string {
		args := []string{"--agent=a1", "--checkpoint=" + target, "--restore=files", "--outside=overwrite", "--json"}
		return append(args, "--plan="+env.DryRun(args[:4]...).Plan)
	}

	// kill -9 at the first deletion, the swapper running.
	stop := make(chan struct{})
	c := env.StartPaused("rollback-unlink-each", nil, "rollback",
		planFor("k2")...)
	wg := swapper(stop)
	time.Sleep(50 * time.Millisecond)
	Kill9(t, c)
	close(stop)
	wg.Wait()
	putBack()
	env.assertGuarded(before, outside)

	codes := map[int]int{}
	for round := 0; round < 6; round++ {
		resume := env.startResumable("rollback-after-safety", "rollback", planFor([]string{"k2", "k4"}[round%2])...)
		stop := make(chan struct{})
		wg := swapper(stop)
		r := resume()
		close(stop)
		wg.Wait()
		require.NotContains(t, r.Stderr, "panic:")
		require.Contains(t, []int{0, 1}, r.Code, r.Stdout+r.Stderr)
		codes[r.Code]++
		putBack()
		env.assertGuarded(before, outside)
	}
	t.Logf("real calls by exit code: %v", codes)
}

// TestSecurity_StageSwappedBeforePlacing: the real call pauses once
// checkout-index has staged the files; venom/tmp (group-writable under
// core.sharedRepository=group) is replaced with a link to an attacker's
// folder holding a stage of the same name (zzz.txt a link to a file
// outside, a.txt the attacker's). The rollback places what git staged
// (exact:true), or fails cleanly; nothing of the attacker's reaches the
// tree, and nothing outside changes.
func TestSecurity_StageSwappedBeforePlacing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := env.Outside(precious("secret"))
	env.Turn("a1", func() {
		env.Write("a.txt", "checkpoint a\n")
		env.Write("d/e/b.txt", "checkpoint b\n")
		env.Write("zzz.txt", "checkpoint z\n")
	}) // k1, k2
	env.Turn("a1", func() {
		env.Write("a.txt", "agent a\n")
		env.Write("d/e/b.txt", "agent b\n")
		env.Remove("zzz.txt")
	})
	before := env.guard(outside)
	args := []string{"--agent=a1", "--checkpoint=k2", "--restore=files", "--json"}
	plan := env.DryRun(args[:3]...).Plan
	resume := env.startResumable("rollback-apply-staged", "rollback", append(args, "--plan="+plan)...)

	tmp := filepath.Join(env.StateDir(), "tmp")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	attacker := filepath.Join(env.Root, "attacker")
	staged := 0
	for _, de := range entries {
		if !de.IsDir() {
			continue
		}
		// The attacker (a group member) reads the stage's name in tmp/
		// and prepares one of that name.
		stage := filepath.Join(attacker, de.Name())
		require.NoError(t, os.MkdirAll(filepath.Join(stage, "d", "e"), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(stage, "zzz.txt")))
		require.NoError(t, os.WriteFile(filepath.Join(stage, "a.txt"), []byte("attacker\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(stage, "d", "e", "b.txt"), []byte("attacker\n"), 0o644))
		staged++
	}
	require.Equal(t, 1, staged, "one stage in tmp/: %v", entries)
	require.NoError(t, os.Rename(tmp, filepath.Join(env.Root, "tmp-moved")))
	require.NoError(t, os.Symlink(attacker, tmp))
	r := resume()
	t.Logf("exit %d: %s", r.Code, r.Stdout)

	require.NotContains(t, r.Stderr, "panic:")
	for _, p := range []string{"a.txt", "d/e/b.txt", "zzz.txt"} {
		fi, err := os.Lstat(env.Path(p))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular(), "%s is %v in the tree", p, fi.Mode())
		b, err := os.ReadFile(env.Path(p))
		require.NoError(t, err)
		require.NotContains(t, string(b), "attacker", "%s holds the attacker's content", p)
	}
	switch r.Code {
	case 0:
		var res RollbackResult
		r.JSON(t, &res)
		require.NotNil(t, res.Exact)
		require.True(t, *res.Exact, "%s", r.Stdout)
		for p, want := range map[string]string{"a.txt": "checkpoint a\n", "d/e/b.txt": "checkpoint b\n", "zzz.txt": "checkpoint z\n"} {
			b, err := os.ReadFile(env.Path(p))
			require.NoError(t, err)
			require.Equal(t, want, string(b), p)
		}
	case 1:
		require.Regexp(t, `"code":"failed\.`, r.Stdout)
	default:
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	env.assertGuarded(before, outside)
	// Nothing of the attacker's folder was taken or removed.
	fi, err := os.Lstat(filepath.Join(attacker))
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}
