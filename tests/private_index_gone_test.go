package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A linked worktree's private index (as large as its index) goes with the
// worktree: the next prune removes it, and leaves the main worktree's.
func TestPrune_ForgetsThePrivateIndexOfARemovedWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	wt := filepath.Join(env.Root, "wt")
	env.Git("worktree", "add", "-q", "-b", "feature", wt)
	w := env.At(wt)
	w.Write("feature.txt", "agent's work\n")
	w.Take(t, "--agent=w1", "--isolation=worktree")
	env.Take(t, "--agent=m1")
	indexes := func() []string {
		list, err := filepath.Glob(env.Path(".git/venom/index/*.index"))
		require.NoError(t, err)
		return list
	}
	require.Len(t, indexes(), 2)

	// Kept while the worktree is there.
	env.Venom("checkpoint", "prune", "--json").OK(t)
	require.Len(t, indexes(), 2)

	env.Git("worktree", "remove", "--force", wt)
	env.Venom("checkpoint", "prune", "--json").OK(t)
	left := indexes()
	require.Len(t, left, 1)
	metas, err := filepath.Glob(env.Path(".git/venom/index/*.json"))
	require.NoError(t, err)
	require.Len(t, metas, 1)

	// The main worktree's is the one left, and still serves its captures.
	env.Write("README.md", "after the prune\n")
	before := indexes()[0]
	env.Take(t, "--agent=m1")
	require.Equal(t, []string{before}, indexes())
	require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/m1/2"))
}
