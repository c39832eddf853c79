package worktreeid

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return strings.TrimSpace(string(out))
}

// paths is what git says of the worktree at dir: top, git dir, common dir.
func paths(t *testing.T, dir string) (string, string, string) {
	t.Helper()
	out := strings.Split(git(t, dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir",
		"--git-common-dir"), "\n")
	for i := range out {
		out[i] = canonical(out[i])
	}
	return out[0], out[1], out[2]
}

func repoWithWorktree(t *testing.T) (main, wt string) {
	t.Helper()
	root := canonical(t.TempDir())
	main, wt = filepath.Join(root, "main"), filepath.Join(root, "wt")
	require.NoError(t, os.Mkdir(main, 0o755))
	git(t, main, "init", "-q")
	git(t, main, "commit", "-q", "--allow-empty", "-m", "i")
	git(t, main, "worktree", "add", "-q", "--detach", wt)
	return main, wt
}

func TestOf_MainAndLinkedWorktrees(t *testing.T) {
	main, wt := repoWithWorktree(t)
	id, st := Of(paths(t, main))
	require.Nil(t, st)
	require.Equal(t, ID{GitDir: filepath.Join(main, ".git")}, id)

	id, st = Of(paths(t, wt))
	require.Nil(t, st)
	require.Equal(t, filepath.Join(main, ".git", "worktrees", "wt"), id.GitDir)
	require.NotEmpty(t, id.Made)
	top, gd, cd := paths(t, wt)
	require.Nil(t, Check(wt, top, gd, cd, &id))
	require.Nil(t, Check(wt, top, gd, cd, nil))
}

// git worktree remove, then add at the same path: the same admin folder
// name, made again.
func TestCheck_WorktreeAddedAgainIsReplaced(t *testing.T) {
	main, wt := repoWithWorktree(t)
	id, _ := Of(paths(t, wt))
	git(t, main, "worktree", "remove", wt)
	git(t, main, "worktree", "add", "-q", "--detach", wt)
	top, gd, cd := paths(t, wt)
	require.Equal(t, id.GitDir, gd)
	st := Check(wt, top, gd, cd, &id)
	require.NotNil(t, st)
	require.Equal(t, Replaced, st.Reason)
}

// git 2.48's --relative-paths links: both files relative, as git writes
// them; the identity is the same worktree's.
func TestOf_RelativeLinks(t *testing.T) {
	main, wt := repoWithWorktree(t)
	before, _ := Of(paths(t, wt))
	admin := filepath.Join(main, ".git", "worktrees", "wt")
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: ../main/.git/worktrees/wt\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(admin, "gitdir"), []byte("../../../../wt/.git\n"), 0o644))
	top, gd, cd := paths(t, wt)
	require.Nil(t, Check(wt, top, gd, cd, &before))
	// A gitdir naming another worktree's .git is a broken back link.
	require.NoError(t, os.WriteFile(filepath.Join(admin, "gitdir"), []byte("../../../../other/.git\n"), 0o644))
	st := Check(wt, top, gd, cd, &before)
	require.NotNil(t, st)
	require.Equal(t, BackLink, st.Reason)
}

func TestCheck_LinkAtThePath(t *testing.T) {
	main, wt := repoWithWorktree(t)
	id, _ := Of(paths(t, wt))
	git(t, main, "worktree", "remove", wt)
	require.NoError(t, os.Symlink(main, wt))
	top, gd, cd := paths(t, wt)
	st := Check(wt, top, gd, cd, &id)
	require.NotNil(t, st)
	require.Equal(t, Link, st.Reason)
}
