package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRollback_KilledGitsIndexLockHint: a rollback killed (SIGKILL, the
// whole group) while it moves HEAD leaves HEAD moved and, when its git
// read-tree dies too, git's .git/index.lock, which nothing but a person
// removes (git's own rule). The next rollback that moves HEAD refuses,
// and says what git says: the lock may be a killed command's, and the
// command that removes it. Run as printed, the undo then works.
func TestRollback_KilledGitsIndexLockHint(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	agentTurn(t, env, func() {
		env.Write("a.txt", "agent\n")
		env.Commit("the agent's commit")
	})
	before := env.RecipeTree()
	head := env.Git("rev-parse", "HEAD")
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files"}
	plan := env.DryRun(args...).Plan
	cmd := env.StartPaused("rollback-head", nil, "rollback", append(args, "--plan="+plan, "--json")...)
	// The git read-tree that runs next takes the lock; killed with it, it
	// leaves the lock behind, as here.
	lock := env.Path(".git/index.lock")
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	Kill9(t, cmd)
	require.NotEqual(t, head, env.Git("rev-parse", "HEAD"), "the killed rollback did not move HEAD")

	r := env.Venom("rollback", "--agent=a1", "--undo", "--restore=files", "--dry-run")
	r.Fails(t, 5, "conflict.git_operation")
	require.Contains(t, r.Stderr, "or one was killed and left the lock")
	var rm string
	for _, l := range strings.Split(r.Stderr, "\n") {
		if c, ok := strings.CutPrefix(l, "hint:   rm -f "); ok {
			rm = "rm -f " + c
		}
	}
	require.NotEmpty(t, rm, "no hint removes the lock:\n%s", r.Stderr)
	sh := exec.Command("sh", "-c", rm)
	sh.Dir = env.Dir
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, err = os.Lstat(lock)
	require.True(t, os.IsNotExist(err), "the hint's command left %s", lock)

	res := env.Rollback("--agent=a1", "--undo", "--restore=files")
	require.True(t, *res.Exact)
	require.Equal(t, head, env.Git("rev-parse", "HEAD"))
	require.Equal(t, before, env.RecipeTree())
	fsckClean(t, env)
}
