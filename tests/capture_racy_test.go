package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Racy stat data (lib/racy, docs/checkpoints.md#racy-stat-data): git 2.39
// compares whole seconds, so an index written again in a later second must
// smudge an entry whose file changed in the old index's second. The tests
// set the times with os.Chtimes instead of racing the clock (a same-size
// edit after the rollback's write, its mtime set back; the private index's
// mtime in that second; core.trustCtime=false, as a ctime cannot be set),
// then wait past that second.

const (
	racyBase = "package main\n\nfunc main() {}\n" // 29 bytes
	racyEdit = "package main // an edit, 29b\n"   // 29 bytes, other content
	racyV2   = "package main\n\nfunc main() { println(\"v2\") }\n"
)

// racySetup makes the racy state up to the same-second edit:
// src/main.go written by a rollback to k1 and recorded in the private
// index, then edited in place to racyEdit within the second of that write,
// the private index written in that second too. It returns k1 and waits
// past that second.
func racySetup(t *testing.T, env *Env) string {
	t.Helper()
	env.Git("config", "core.trustCtime", "false")
	env.Write("src/main.go", racyBase)
	env.Write("a.txt", "alpha\n")
	env.Commit("base")
	env.Write("tmp/x.txt", "scratch\n") // a folder the quick scan's record holds
	k1 := env.Checkpoint("--agent=a1", "--reason=manual")
	env.Write("src/main.go", racyV2)
	res := env.Rollback("--agent=a1", "--checkpoint="+k1, "--restore=files", "--outside=overwrite")
	require.True(t, *res.Exact)
	require.Equal(t, racyBase, env.Read("src/main.go"))

	// The private index now holds src/main.go with the stat data of the
	// rollback's write (capture.NoteWritten).
	main := env.Path("src/main.go")
	fi, err := os.Stat(main)
	require.NoError(t, err)
	written := fi.ModTime()
	idx := privateIndex(t, env)
	require.Contains(t, env.gitIndexDebug(idx, "src/main.go"), fmt.Sprintf("mtime: %d:%d", written.Unix(), written.Nanosecond()),
		"the private index records the rollback's write")

	// The edit: same size, in place, in the second of the write.
	f, err := os.OpenFile(main, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.WriteString(racyEdit)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(main, written, written))
	require.Less(t, written.Nanosecond(), 999_999_999)
	// The index written after the file, in the same second.
	require.NoError(t, os.Chtimes(idx, written, time.Unix(written.Unix(), 999_999_999)))
	time.Sleep(time.Until(time.Unix(written.Unix()+1, 50e6)))
	return k1
}

// gitIndexDebug is git ls-files --debug of path in the index file idx.
func (e *Env) gitIndexDebug(idx, path string) string {
	e.t.Helper()
	r := e.run(e.Dir, []string{"GIT_INDEX_FILE=" + idx}, "git", "ls-files", "--debug", "--", path)
	require.Equal(e.t, 0, r.Code, r.Stderr)
	return r.Stdout
}

// TestCapture_RacyEntrySmudgedWhenPatched: after a
// same-size edit in the second of a rollback's write, a later rollback
// that writes the private index again (another path) in a later second,
// and a capture that falls back to git status (a folder the quick scan's
// record holds is gone), the checkpoint holds the file's new content, as
// git hash-object reads it, not the rollback's old blob.
func TestCapture_RacyEntrySmudgedWhenPatched(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	k1 := racySetup(t, env)
	env.Write("a.txt", "beta\n")
	plan := env.venomRollbackPlan("--agent=a1", "--checkpoint="+k1, "--restore=files", "--outside=overwrite", "--", "a.txt")
	var res RollbackResult
	env.Venom("rollback", "--agent=a1", "--checkpoint="+k1, "--restore=files", "--outside=overwrite",
		"--plan="+plan, "--json", "--", "a.txt").OK(t).JSON(t, &res)
	require.True(t, *res.Exact)
	require.Equal(t, "alpha\n", env.Read("a.txt"))
	// Written again in a later second, the private index keeps
	// src/main.go's entry only smudged (size 0): racy for git against the
	// index it was read from.
	assert.Contains(t, env.gitIndexDebug(privateIndex(t, env), "src/main.go"), "size: 0\t")

	env.Remove("tmp") // the quick scan gives way to git status
	k := env.Checkpoint("--agent=a1")
	want := env.Git("hash-object", "src/main.go")
	got := env.Git("rev-parse", "refs/venom/checkpoints/a1/"+k[1:]+":src/main.go")
	require.Equal(t, want, got, "checkpoint %s holds src/main.go as %q, the file is %q", k,
		env.Git("cat-file", "-p", got), env.Read("src/main.go"))
	require.Equal(t, racyEdit, env.Git("cat-file", "-p", got)+"\n")
}

// TestRollback_ExactAfterRacyEntry, the same edit's second symptom: a
// rollback whose safety capture saw the same-second edit (the quick
// scan, which compares nanoseconds) and whose after-capture went to git
// status (the rollback removed a folder the quick scan's record holds)
// reported exact: false, and its after checkpoint held the old blob,
// though nothing wrote during the rollback: the private index it patched
// kept the racy entry unsmudged.
func TestRollback_ExactAfterRacyEntry(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	racySetup(t, env)
	// A checkpoint of the edit, through the quick scan: the private index
	// is not written.
	k2 := env.Checkpoint("--agent=a1", "--reason=manual")
	require.Equal(t, env.Git("hash-object", "src/main.go"),
		env.Git("rev-parse", "refs/venom/checkpoints/a1/"+k2[1:]+":src/main.go"))
	// A turn's work: a.txt edited, a new folder.
	env.Write("a.txt", "beta\n")
	env.Write("newdir/n.txt", "new\n")
	env.Checkpoint("--agent=a1", "--reason=manual")
	res := env.Rollback("--agent=a1", "--checkpoint="+k2, "--restore=files", "--outside=overwrite")
	_, err := os.Lstat(env.Path("newdir"))
	require.True(t, os.IsNotExist(err), "the rollback removes newdir")
	after := env.Git("rev-parse", "refs/venom/checkpoints/a1/"+res.After[1:]+":src/main.go")
	assert.Equal(t, env.Git("hash-object", "src/main.go"), after, "the after checkpoint holds src/main.go's old blob")
	require.True(t, *res.Exact, "nothing wrote during the rollback")
}

// venomRollbackPlan runs a rollback dry run (args may end in "-- paths")
// and returns its plan.
func (e *Env) venomRollbackPlan(args ...string) string {
	e.t.Helper()
	flags, paths := args, []string(nil)
	for i, a := range args {
		if a == "--" {
			flags, paths = args[:i], args[i:]
			break
		}
	}
	var res RollbackResult
	e.Venom("rollback", append(append(append([]string{}, flags...), "--dry-run", "--json"), paths...)...).OK(e.t).JSON(e.t, &res)
	require.True(e.t, res.DryRun)
	return res.Plan
}

// TestRollback_NotedFileRewrittenInItsSecond: a file the rollback placed,
// rewritten in place by someone else, same size, in its write's second,
// before the rollback notes it in the private index. The rollback says
// exact: false, and no later checkpoint holds the rollback's blob for it:
// the note checks stat data again to the nanosecond.
func TestRollback_NotedFileRewrittenInItsSecond(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "core.trustCtime", "false")
	env.Write("src/main.go", racyBase)
	env.Commit("base")
	env.Write("tmp/x.txt", "scratch\n")
	k1 := env.Checkpoint("--agent=a1", "--reason=manual")
	env.Write("src/main.go", racyV2)
	args := []string{"--agent=a1", "--checkpoint=" + k1, "--restore=files", "--outside=overwrite", "--json"}
	plan := env.DryRun(args[:4]...).Plan
	p := env.pause("rollback-files-placed", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback", append(args, "--plan="+plan)...)
	main := env.Path("src/main.go")
	fi, err := os.Stat(main)
	require.NoError(t, err)
	require.Equal(t, racyBase, env.Read("src/main.go"))
	f, err := os.OpenFile(main, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(racyEdit), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(main, fi.ModTime(), fi.ModTime()))
	time.Sleep(time.Until(time.Unix(fi.ModTime().Unix()+1, 50e6)))
	require.NoError(t, os.Remove(p.file))
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the rollback did not end")
	}
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	var res RollbackResult
	require.NoError(t, json.Unmarshal(p.out.Bytes(), &res), p.out.String())
	require.NotNil(t, res.Exact)
	require.False(t, *res.Exact, "someone wrote during the rollback")

	env.Remove("tmp") // the quick scan gives way to git status
	k := env.Checkpoint("--agent=a1")
	got := env.Git("rev-parse", "refs/venom/checkpoints/a1/"+k[1:]+":src/main.go")
	require.Equal(t, env.Git("hash-object", "src/main.go"), got, "checkpoint %s holds %q", k, env.Git("cat-file", "-p", got))
}

// TestRollback_NotedFileRewrittenAfterItsCheck: as above, but the file is
// rewritten after the note checked it, once the patched private index is
// in place, and that index is in the next second (its mtime set there, as
// a long rollback would leave it). The note checks the files once more
// and throws the index away: no later checkpoint holds the rollback's
// blob for the file.
func TestRollback_NotedFileRewrittenAfterItsCheck(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "core.trustCtime", "false")
	env.Write("src/main.go", racyBase)
	env.Commit("base")
	env.Write("tmp/x.txt", "scratch\n")
	k1 := env.Checkpoint("--agent=a1", "--reason=manual")
	env.Write("src/main.go", racyV2)
	args := []string{"--agent=a1", "--checkpoint=" + k1, "--restore=files", "--outside=overwrite", "--json"}
	plan := env.DryRun(args[:4]...).Plan
	p := env.pause("rollback-noted", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback", append(args, "--plan="+plan)...)
	main := env.Path("src/main.go")
	fi, err := os.Stat(main)
	require.NoError(t, err)
	idx := privateIndex(t, env)
	require.Contains(t, env.gitIndexDebug(idx, "src/main.go"), fmt.Sprintf("mtime: %d:%d", fi.ModTime().Unix(), fi.ModTime().Nanosecond()),
		"the private index notes the rollback's write")
	f, err := os.OpenFile(main, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(racyEdit), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(main, fi.ModTime(), fi.ModTime()))
	next := time.Unix(fi.ModTime().Unix()+1, 0)
	require.NoError(t, os.Chtimes(idx, next, next))
	time.Sleep(time.Until(next.Add(50 * time.Millisecond)))
	require.NoError(t, os.Remove(p.file))
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the rollback did not end")
	}
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	var res RollbackResult
	require.NoError(t, json.Unmarshal(p.out.Bytes(), &res), p.out.String())
	require.NotNil(t, res.Exact)
	require.False(t, *res.Exact, "someone wrote during the rollback")

	env.Remove("tmp") // the quick scan gives way to git status
	k := env.Checkpoint("--agent=a1")
	got := env.Git("rev-parse", "refs/venom/checkpoints/a1/"+k[1:]+":src/main.go")
	require.Equal(t, env.Git("hash-object", "src/main.go"), got, "checkpoint %s holds %q", k, env.Git("cat-file", "-p", got))
}
