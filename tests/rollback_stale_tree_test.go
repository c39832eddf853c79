package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// staleAgent: agent wa registered with --isolation=worktree in the linked
// worktree wt, which then held its change (k2); the worktree is removed.
// It returns wt's path.
func staleAgent(t *testing.T, env *Env) string {
	t.Helper()
	env.Git("branch", "-q", "other")
	w := env.InWorktree(t, "wt", "agent")
	w.Venom("checkpoint", "--agent=wa", "--isolation=worktree", "--json").OK(t)
	w.Write("README.md", "the agent's change\n")
	w.Venom("checkpoint", "--agent=wa", "--json").OK(t)
	env.Git("worktree", "remove", "--force", w.Dir)
	return w.Dir
}

// refusedStale checks that a dry run and a real call of wa, run in dir,
// are conflict.tree_stale with that reason, and write nothing: the same
// files, status, HEAD and checkpoint refs, checked with plain git.
func refusedStale(t *testing.T, env *Env, dir, reason string) {
	t.Helper()
	files := treeHash(dir)
	status := gitIn(t, env, dir, "status", "--porcelain", "--untracked-files=all")
	head := gitIn(t, env, dir, "rev-parse", "HEAD")
	refs := env.Git("for-each-ref", "refs/venom/")
	for _, args := range [][]string{
		{"--agent=wa", "k1", "--restore=files", "--dry-run", "--json"},
		{"--agent=wa", "k1", "--restore=files", "--plan=p1-0123456789abcdef", "--json"},
	} {
		r := env.VenomIn(dir, []string{"VENOM_CALLER=person"}, "rollback", args...).Fails(t, 5, "conflict.tree_stale")
		var data map[string]string
		require.NoError(t, json.Unmarshal([]byte(dataOf(t, r)), &data))
		assert.Equal(t, map[string]string{"agent": "wa", "tree": filepath.Join(env.Root, "wt"), "reason": reason}, data)
	}
	human := env.VenomIn(dir, nil, "rollback", "--agent=wa", "k1", "--dry-run").Fails(t, 5, "conflict.tree_stale")
	assert.Contains(t, human.Stderr, "hint: its checkpoint stays readable with git: git show --stat refs/venom/checkpoints/wa/1")
	env.Git("show", "--stat", "refs/venom/checkpoints/wa/1") // the hint works as printed

	require.Equal(t, files, treeHash(dir), "the person's files changed")
	require.Equal(t, status, gitIn(t, env, dir, "status", "--porcelain", "--untracked-files=all"))
	require.Equal(t, head, gitIn(t, env, dir, "rev-parse", "HEAD"))
	require.Equal(t, refs, env.Git("for-each-ref", "refs/venom/"), "a safety checkpoint was made")

	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	msg, fix := rep.check(t, "agents.trees")
	assert.Equal(t, "warn", rep.status()["agents.trees"])
	assert.Contains(t, msg, "wa at "+filepath.Join(env.Root, "wt")+" ("+reason+")")
	assert.Contains(t, fix, "git venom-checkpoint clean --agent=wa")
}

func gitIn(t *testing.T, env *Env, dir string, args ...string) string {
	t.Helper()
	r := env.run(dir, nil, "git", args...)
	require.Equal(t, 0, r.Code, r.Stderr)
	return strings.TrimSpace(r.Stdout)
}

// A new worktree at the removed one's path (git gives it the same admin
// folder name) is the person's, not the agent's: before, the rollback
// overwrote their edit and deleted their new file with no outside-edit
// refusal, treating the tree as the agent's own unguarded one.
func TestRollback_StaleAgentNewWorktreeAtItsPath(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	wt := staleAgent(t, env)
	env.Git("worktree", "add", "-q", wt, "other")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "README.md"), []byte("THE PERSON'S UNSAVED WORK\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("the person's notes\n"), 0o644))
	// The same admin folder: only its making tells the worktrees apart.
	require.Equal(t, filepath.Join(env.Dir, ".git", "worktrees", "wt"), gitIn(t, env, wt, "rev-parse", "--absolute-git-dir"))
	refusedStale(t, env, wt, "replaced")
	refusedStale(t, env, env.Dir, "replaced")
	require.Equal(t, "THE PERSON'S UNSAVED WORK\n", readFile(t, filepath.Join(wt, "README.md")))
	require.Equal(t, "the person's notes\n", readFile(t, filepath.Join(wt, "notes.txt")))
}

// A link at the removed worktree's path to the person's main worktree.
func TestRollback_StaleAgentLinkToTheMainWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	wt := staleAgent(t, env)
	require.NoError(t, os.Symlink(env.Dir, wt))
	env.Write("README.md", "THE PERSON'S UNSAVED WORK\n")
	env.Write("mine.txt", "mine\n")
	refusedStale(t, env, env.Dir, "link")
	require.Equal(t, "THE PERSON'S UNSAVED WORK\n", env.Read("README.md"))
	require.Equal(t, "mine\n", env.Read("mine.txt"))
}

// The agent's own worktree, whose admin folder's gitdir git worktree
// repair would have to mend, is refused too; once repaired it rolls back.
func TestRollback_StaleAgentBrokenBackLink(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("branch", "-q", "other")
	w := env.InWorktree(t, "wt", "agent")
	w.Venom("checkpoint", "--agent=wa", "--isolation=worktree", "--json").OK(t)
	w.Write("README.md", "the agent's change\n")
	w.Venom("checkpoint", "--agent=wa", "--json").OK(t)
	gitdir := filepath.Join(env.Dir, ".git", "worktrees", "wt", "gitdir")
	require.NoError(t, os.WriteFile(gitdir, []byte(filepath.Join(env.Root, "elsewhere", ".git")+"\n"), 0o644))
	refusedStale(t, env, w.Dir, "back_link")
	w.Git("worktree", "repair")
	require.Equal(t, filepath.Join(w.Dir, ".git"), strings.TrimSpace(readFile(t, gitdir)))
	w.Rollback("--agent=wa", "k1", "--restore=files")
	require.Equal(t, "hello\n", w.Read("README.md"))
}
