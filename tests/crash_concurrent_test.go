package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The user's own git commands run while a rollback is under way: the
// rollback is held at rollback-apply-staged (its files staged, none yet in
// the tree, HEAD not moved), the user's command runs, and the rollback goes
// on. Whatever the outcome (done, undone, partial), nothing the user's
// command made is lost and the user's HEAD, branch and index agree.

// userRaceWorld: agent a1 in the main worktree, unguarded
// (--isolation=worktree). Its turn commits C1 on main over the initial C0
// and leaves a file of its own; branch other is at C1 too. The rollback to
// k1 (the turn's start) writes files back and moves main from C1 to C0.
func userRaceWorld(t *testing.T) (env *Env, c0, c1 string) {
	t.Helper()
	env = NewEnv(t)
	env.Write("keep/a.txt", "a\n")
	c0 = env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("keep/a.txt", "the agent's\n")
	env.Write("made/by/turn.txt", "new\n")
	c1 = env.Commit("the agent's commit")
	env.Write("scratch.txt", "the agent's scratch\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Git("branch", "other")
	return env, c0, c1
}

// raceRollback runs the real rollback to k1 held at rollback-apply-staged,
// runs user meanwhile, and returns the rollback's result.
func raceRollback(t *testing.T, env *Env, args []string, user func()) Result {
	t.Helper()
	plan := env.DryRun(args...).Plan
	resume := env.startResumable("rollback-apply-staged", "rollback", append(args, "--plan="+plan, "--json")...)
	user()
	r := resume()
	require.NotContains(t, r.Stderr, "panic:")
	t.Logf("the rollback: exit %d %s", r.Code, strings.TrimSpace(r.Stdout))
	return r
}

// assertIndexIsHead: the user's index holds HEAD's tree and nothing the
// user did not stage.
func assertIndexIsHead(t *testing.T, env *Env, why string) {
	t.Helper()
	r := env.GitRaw("diff", "--cached", "--name-status", "HEAD")
	require.Equal(t, 0, r.Code, r.Stderr)
	require.Empty(t, strings.TrimSpace(r.Stdout), "%s: the index differs from HEAD", why)
}

// TestCrash_RollbackWhileTheUserChecksOut: the person checks out another
// branch at the same commit, or detaches HEAD there, while an unguarded
// rollback writes its files. HEAD is not the rollback's any more: it must
// not move the branch it planned to move nor reset the index, which now
// belong to another checkout; it fails and is undone (docs/rollback.md#failures).
func TestCrash_RollbackWhileTheUserChecksOut(t *testing.T) {
	t.Parallel()
	for name, checkout := range map[string][]string{
		"another branch": {"checkout", "-q", "other"},
		"detached":       {"checkout", "-q", "--detach"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, _, c1 := userRaceWorld(t)
			args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files"}
			var indexAfter, headAfter string
			r := raceRollback(t, env, args, func() {
				env.Git(checkout...)
				indexAfter = env.IndexHash()
				headAfter = env.Snapshot().Head
			})
			require.Equal(t, headAfter, env.Snapshot().Head, "HEAD is the person's")
			require.Equal(t, c1, env.Git("rev-parse", "refs/heads/other"))
			require.Equal(t, c1, env.Git("rev-parse", "refs/heads/main"),
				"the rollback moved main, which is no longer checked out: %s", r.Stdout)
			require.Equal(t, indexAfter, env.IndexHash(), "the rollback wrote the index of the person's checkout")
			assertIndexIsHead(t, env, "after the checkout")
			r.Fails(t, 1, "failed.rollback_undone")
			env.assertCrashLeftovers(t)
			// The rollback can be asked again, from the new HEAD, with --keep-head.
			env.Rollback(append(args, "--keep-head")...)
			require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
		})
	}
}
