package tests

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrash_CapturesBesideGitGCInALoop: the person's git gc --auto (made to
// repack every time: gc.auto=1, gc.autoPackLimit=1) runs over and over
// while captures write packs and merge git-venom's own (threshold 2).
// Every capture succeeds with the recipe's tree or fails with a registry
// code, and afterwards git fsck is clean, every checkpoint's objects are
// there and a rollback to the first works.
func TestCrash_CapturesBesideGitGCInALoop(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Extra = append(env.Extra, "VENOM_TEST_PACK_THRESHOLD=2")
	// Binaries: a capture holds its pack against the gc until its ref is
	// made, and in this process another world's command lets go of every
	// hold of the process (packset.Release).
	env.Binary = true
	env.Write("work.txt", "start\n")
	env.Take(t, "--agent=a1")
	first := env.RecipeTree()
	stop := make(chan struct{})
	done := make(chan int)
	// The loop ends before the test does, even when a check fails: a log
	// line from it after the end panics the whole test binary.
	var once sync.Once
	runs := 0
	stopLoop := func() int {
		once.Do(func() { close(stop); runs = <-done })
		return runs
	}
	t.Cleanup(func() { stopLoop() })
	go func() {
		runs := 0
		for {
			select {
			case <-stop:
				done <- runs
				return
			default:
			}
			c := exec.Command("git", "-c", "gc.auto=1", "-c", "gc.autoPackLimit=1", "-c", "gc.autoDetach=false",
				"gc", "--auto", "--quiet")
			c.Dir, c.Env = env.Dir, env.Environ()
			if out, err := c.CombinedOutput(); err != nil {
				// A merge that removed a pack under the person's repack
				// (outside the gc.pid check's window) fails that gc run
				// only: the next one works.
				t.Logf("git gc --auto: %v %s", err, out)
			}
			runs++
		}
	}()
	failed := 0
	for i := 0; i < 12; i++ {
		env.Write("work.txt", fmt.Sprintf("step %d\n", i))
		env.Write(fmt.Sprintf("new/%d.txt", i), "new\n")
		want := env.RecipeTree()
		r := env.Venom("checkpoint", "--agent=a1", "--json")
		require.NotContains(t, r.Stderr, "panic:")
		if r.Code != 0 {
			failed++
			t.Logf("capture %d: exit %d %s %s", i, r.Code, r.Stdout, r.Stderr)
			require.Contains(t, r.Stdout, `"code":"failed.`)
			continue
		}
		var res TakeResult
		r.JSON(t, &res)
		require.Equal(t, want, env.CheckpointTreeOf("a1", *res.Checkpoint))
	}
	t.Logf("git gc ran %d times; %d captures failed", stopLoop(), failed)
	require.Zero(t, failed, "a capture failed because the person's gc ran")
	require.Zero(t, env.here, "commands that ran in the test's process")
	env.assertCrashLeftovers(t)
	env.assertRefsLogged(t)
	env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
	require.Equal(t, first, env.RecipeTree())
}

// TestCrash_NoPackRemovedWhileGitGCRuns: while the person's git gc runs
// (gc.pid in the git folder, as git gc keeps it), git-venom merges none of
// its packs and removes none: a git repack that listed a pack and then
// cannot find it fails ("unable to add recent objects"), and the person's
// gc with it. Once gc.pid is gone the next capture merges again.
func TestCrash_NoPackRemovedWhileGitGCRuns(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
	w.capture(t, 1)
	pid := w.Path(".git/gc.pid")
	require.NoError(t, os.WriteFile(pid, []byte(fmt.Sprintf("%d localhost\n", os.Getpid())), 0o644))
	var packs []string
	for i := 2; i <= 6; i++ {
		before := w.PackNames()
		w.capture(t, i)
		after := w.PackNames()
		for _, p := range before {
			require.Contains(t, after, p, "capture %d removed pack %s while git gc ran", i, p)
		}
		packs = after
	}
	require.Greater(t, len(packs)-2, 2, "no capture left its pack while git gc ran")
	require.NoError(t, os.Remove(pid))
	w.capture(t, 7)
	require.Less(t, len(w.PackNames()), len(packs), "the merges did not resume once git gc ended")
	w.check(t, 7, 2)
}
