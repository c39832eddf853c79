package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRollback_HeadOnARefOutsideBranches: HEAD attached to a ref outside
// refs/heads (git symbolic-ref HEAD refs/remotes/origin/x, or refs/other/y)
// is on no branch, as git branch --show-current says: a checkpoint records
// no branch, and a rollback that would move HEAD is conflict.head_moved
// (docs/rollback.md#head: it writes no other ref) and writes nothing;
// --keep-head restores the files and leaves HEAD and that ref as they were.
func TestRollback_HeadOnARefOutsideBranches(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"refs/remotes/origin/x", "refs/other/y"} {
		t.Run(ref, func(t *testing.T) {
			t.Parallel()
			env := headEnv(t, func(env *Env) {
				env.Git("update-ref", ref, "HEAD")
				env.Git("symbolic-ref", "HEAD", ref)
			})
			// The agent's commit moved the ref HEAD is on.
			top := env.Git("rev-parse", ref)
			require.Equal(t, top, env.Git("rev-parse", "HEAD"))
			require.NotEqual(t, top, env.Git("rev-parse", "refs/heads/main"))
			require.Equal(t, 128, env.run(env.Dir, nil, "git", "branch", "--show-current").Code, "git sees no branch")
			for _, rec := range env.Records("checkpoint.taken") {
				require.NotContains(t, rec["repos"].([]any)[0].(map[string]any), "branch", "recorded as a branch")
			}

			snap := env.Snapshot()
			r := env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--dry-run", "--json").Fails(t, 5, "conflict.head_moved")
			require.Contains(t, r.Stdout, ref)
			// The real call refuses too, whatever plan it is handed.
			plan := env.DryRun("--checkpoint=k1", "--restore=files", "--keep-head").Plan
			env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json").Fails(t, 5, "conflict.head_moved")
			env.AssertUntouched(t, snap)
			require.Equal(t, ref, env.Git("symbolic-ref", "HEAD"))
			require.Equal(t, top, env.Git("rev-parse", ref))
			require.Equal(t, snap.Refs, env.Snapshot().Refs)

			// --keep-head restores the files and leaves HEAD where it is.
			res := env.Rollback("--checkpoint=k1", "--restore=files", "--keep-head")
			require.False(t, res.Repos[0].Head.Moves)
			require.Equal(t, ref, env.Git("symbolic-ref", "HEAD"))
			require.Equal(t, top, env.Git("rev-parse", ref))
			require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
		})
	}
}
