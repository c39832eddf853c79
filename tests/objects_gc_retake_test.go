package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigFile is past the capture's in-memory bound: git hash-object -w
// stores it, loose, and nothing holds it until the checkpoint's pack.
func bigFile(tag string) string {
	return strings.Repeat("a big file, stored loose by git: "+tag+"\n", 5<<20/40+1)
}

// TestObjects_GcPruneNowUnderACapture: a person's git gc --prune=now and
// git repack -a -d run while a capture writes its commit, after git
// stored a big file loose and the capture found a new file stored by a
// dry run's pack: both are unreachable and deleted. The capture takes
// its files again, stores them anew, and succeeds with a whole
// checkpoint of them.
func TestObjects_GcPruneNowUnderACapture(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
	env.Write("precious.txt", "a person's new work, in no checkpoint\n")
	big := bigFile("capture")
	env.Write("big.txt", big)
	env.DryRun("--agent=a1", "k1", "--restore=files")

	p := env.pause("commit-write#1", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "checkpoint", "--agent=a1", "--json")
	gcNow(env)
	var res TakeResult
	p.resume(t).OK(t).JSON(t, &res)
	require.Equal(t, "k2", *res.Checkpoint)
	fsckWhole(t, env)
	assert.Equal(t, "a person's new work, in no checkpoint\n", env.GitRaw("show", "refs/venom/checkpoints/a1/2:precious.txt").Stdout)
	assert.Equal(t, big, env.GitRaw("show", "refs/venom/checkpoints/a1/2:big.txt").Stdout)
}

// TestObjects_GcPruneNowUnderARollbacksCapture: the same gc while a real
// call records its rollback capture, which holds a big file a person
// wrote once the files were placed: the rollback takes its capture again
// and ends well, not undone, its rollback checkpoint whole.
func TestObjects_GcPruneNowUnderARollbacksCapture(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
	env.Write("README.md", "an edit the rollback takes back\n")
	args := []string{"--agent=a1", "k1", "--restore=files", "--outside=overwrite"}
	plan := env.DryRun(args...).Plan

	// Paused where the files are placed, then where the rollback
	// capture's commit is written (the safety checkpoint's is the first).
	p := env.pause("rollback-files-placed,commit-write#2", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback",
		append(args, "--plan="+plan, "--json")...)
	big := bigFile("rollback")
	env.Write("late.txt", big)
	p.next(t, "its capture's commit")
	gcNow(env)
	var res RollbackResult
	p.resume(t).OK(t).JSON(t, &res)
	fsckWhole(t, env)
	after := "refs/venom/checkpoints/a1/3"
	assert.Equal(t, big, env.GitRaw("show", after+":late.txt").Stdout)
	assert.Equal(t, env.Git("show", "refs/venom/checkpoints/a1/1:README.md"), env.Git("show", after+":README.md"))
}
