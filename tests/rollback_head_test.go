package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// headEnv: a1 in its own worktree (unguarded); k1 at the start of t1, then
// the turn commits once and ends (k2).
func headEnv(t *testing.T, before func(env *Env)) *Env {
	t.Helper()
	env := NewEnv(t)
	if before != nil {
		before(env)
	}
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("work.txt", "turn\n")
	env.Commit("the agent's commit")
	env.Write("dirty.txt", "uncommitted\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	return env
}

func TestRollback_HeadMovesBackOnTheBranch(t *testing.T) {
	t.Parallel()
	env := headEnv(t, nil)
	base := env.Git("rev-parse", "HEAD~1")
	top := env.Git("rev-parse", "HEAD")
	res := env.Rollback("--checkpoint=k1", "--restore=files")
	h := res.Repos[0].Head
	require.True(t, h.Moves)
	require.Equal(t, top, *h.From)
	require.Equal(t, base, *h.To)
	require.Equal(t, 1, h.Commits)
	require.Equal(t, base, env.Git("rev-parse", "refs/heads/main"))
	require.Equal(t, "refs/heads/main", env.Git("symbolic-ref", "HEAD"))
	// The index follows HEAD, and the files are k1's: a clean status.
	require.Equal(t, "", env.Git("diff", "--cached", "--name-only"))
	require.Equal(t, "", env.Git("status", "--porcelain"))
	require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
	// The dropped commit stays reachable from the safety checkpoint.
	require.Equal(t, top, env.Git("rev-parse", "refs/venom/checkpoints/a1/3^"))
	require.Contains(t, env.Git("reflog", "-1", "refs/heads/main"), "venom rollback a1")
}

func TestRollback_HeadSameCommitIndexUntouched(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("README.md", "changed\n")
	env.Git("add", "README.md") // staged: the index is the user's
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	idx := env.IndexHash()
	res := env.Rollback("--checkpoint=k1", "--restore=files")
	require.False(t, res.Repos[0].Head.Moves)
	require.Equal(t, idx, env.IndexHash(), "the index changed though HEAD did not move (docs/rollback.md#head)")
	require.Equal(t, "hello\n", env.Read("README.md"))
}

func TestRollback_HeadDetached(t *testing.T) {
	t.Parallel()
	env := headEnv(t, func(env *Env) { env.Git("checkout", "-q", "--detach") })
	base := env.Git("rev-parse", "HEAD~1")
	main := env.Git("rev-parse", "refs/heads/main")
	env.Rollback("--checkpoint=k1", "--restore=files")
	require.Equal(t, base, env.Git("rev-parse", "HEAD"))
	require.NotEqual(t, 0, env.GitRaw("symbolic-ref", "-q", "HEAD").Code, "HEAD is no longer detached")
	require.Equal(t, main, env.Git("rev-parse", "refs/heads/main"), "a branch moved")
	require.Equal(t, "", env.Git("status", "--porcelain"))
}

func TestRollback_HeadRefusals(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		env  func(t *testing.T) *Env
		code string
	}{
		"null head": {func(t *testing.T) *Env {
			env := NewBareEnv(t)
			env.Write("a.txt", "a\n")
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
			env.Commit("first")
			return env
		}, "conflict.head_moved"},
		"another branch": {func(t *testing.T) *Env {
			env := NewEnv(t)
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
			env.Git("checkout", "-q", "-b", "other")
			env.Commit("on other")
			return env
		}, "conflict.head_moved"},
		"rebased": {func(t *testing.T) *Env {
			env := NewEnv(t)
			env.Write("b.txt", "b\n")
			env.Commit("second")
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
			env.Tick()
			env.Git("commit", "-q", "--amend", "-m", "second, amended")
			return env
		}, "conflict.head_moved"},
		"pushed": {func(t *testing.T) *Env {
			env := headEnv(t, nil)
			env.Git("update-ref", "refs/remotes/origin/main", "HEAD")
			return env
		}, "conflict.commits_pushed"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := c.env(t)
			snap := env.Snapshot()
			r := env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--dry-run", "--json").Fails(t, 5, c.code)
			if c.code == "conflict.commits_pushed" {
				require.JSONEq(t, `{"repo":".","commits":["`+env.Git("rev-parse", "HEAD")+`"],"refs":["refs/remotes/origin/main"]}`,
					dataOf(t, r))
			}
			env.AssertUntouched(t, snap)
			// --keep-head restores the files and leaves HEAD.
			head := env.Git("rev-parse", "HEAD")
			res := env.Rollback("--checkpoint=k1", "--restore=files", "--keep-head")
			require.False(t, res.Repos[0].Head.Moves)
			require.Equal(t, head, env.Git("rev-parse", "HEAD"))
			require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
		})
	}
}

// TestRollback_GuardedNeverMovesHead: invariant 4.
func TestRollback_GuardedNeverMovesHead(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t) // in_place
	env.Write("work.txt", "turn\n")
	env.Commit("the agent's commit")
	env.Write("staged.txt", "staged\n")
	env.Git("add", "staged.txt")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	snap := env.Snapshot()
	res := env.Rollback("--checkpoint=k1", "--restore=files", "--outside=overwrite")
	require.False(t, res.Repos[0].Head.Moves)
	after := env.Snapshot()
	require.Equal(t, snap.Index, after.Index, "the index changed in a guarded tree")
	require.Equal(t, snap.Head, after.Head)
	require.Equal(t, snap.Refs, after.Refs, "a branch moved in a guarded tree")
	require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
}
