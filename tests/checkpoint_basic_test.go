package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckpoint_CapturesLikeTheRecipe(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Write("dir/b.txt", "two\n")
	env.Commit("second")
	env.Write("a.txt", "changed\n")     // tracked, unstaged
	env.Write("dir/c.txt", "new\n")     // untracked
	env.Write("staged.txt", "staged\n") // staged, then changed again
	env.Git("add", "staged.txt")
	env.Write("staged.txt", "staged twice\n")
	env.Remove("dir/b.txt") // deleted
	env.Write(".gitignore", "*.log\n")
	env.Write("debug.log", "ignored\n")
	want := env.RecipeTree()
	snap := env.Snapshot()

	require.Equal(t, "k1", env.Checkpoint("--agent=a1"))

	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	require.Empty(t, env.GitRaw("cat-file", "-e", "refs/venom/checkpoints/a1/1:debug.log").Stdout)
	require.NotEqual(t, 0, env.GitRaw("cat-file", "-e", "refs/venom/checkpoints/a1/1:debug.log").Code,
		"an ignored file was captured")
	require.Equal(t, env.Git("rev-parse", "HEAD"), env.Git("rev-parse", "refs/venom/checkpoints/a1/1^"))
}

func TestCheckpoint_DedupReusesTheLatest(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	require.Equal(t, "k1", env.Checkpoint("--agent=a1"))
	m := env.Venom("checkpoint", "--agent=a1", "--json").OK(t).Map(t)
	require.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1", "reused": true, "skipped": []any{}}, m)
	require.Equal(t, "refs/venom/checkpoints/a1/1", env.Git("for-each-ref", "--format=%(refname)", "refs/venom"))
}
