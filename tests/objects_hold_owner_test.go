package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// packKeeps lists the .keep files in the repository's objects/pack.
func packKeeps(e *Env) []string {
	e.t.Helper()
	keeps, err := filepath.Glob(e.Path(".git/objects/pack/*.keep"))
	require.NoError(e.t, err)
	return keeps
}

// TestObjects_AnotherCaptureLeavesALiveHold: a dry run holds the pack of
// S's objects that no ref reaches (its .keep) until it has read them, and
// takes no lock. Another agent's capture in a linked worktree of the same
// repository meanwhile lets go of the holds a killed command left; it
// must not take the live dry run's, or a person's gc --prune=now deletes
// the pack under it. The dry run gives the plan it gives without them.
func TestObjects_AnotherCaptureLeavesALiveHold(t *testing.T) {
	t.Parallel()
	env := gcWorld(t)
	wt := filepath.Join(env.Root, "other-wt")
	env.Git("worktree", "add", "-q", "-b", "other", wt)
	args := []string{"--agent=a1", "k2", "--restore=files"}
	// A file no capture has seen: its blob and S's trees are in the
	// paused dry run's own pack only, which its handles never opened.
	env.Write("notes/later.txt", "written after the last dry run\n")

	p := env.pause("dry-run-captured", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback",
		append(args, "--dry-run", "--json")...)
	held := packKeeps(env)
	require.NotEmpty(t, held, "the paused dry run holds no pack")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "b.txt"), []byte("the other agent's file\n"), 0o644))
	env.VenomIn(wt, nil, "checkpoint", "--agent=b1", "--isolation=worktree", "--json").OK(t)
	require.Subset(t, packKeeps(env), held, "another agent's capture took the live dry run's hold")

	gcNow(env)
	var got RollbackResult
	p.resume(t).OK(t).JSON(t, &got)
	require.Empty(t, packKeeps(env), "the dry run left its hold")
	require.Equal(t, rollbackJSON[RollbackResult](env, args, "--dry-run").Plan, got.Plan)
	fsckClean(t, env)
}
