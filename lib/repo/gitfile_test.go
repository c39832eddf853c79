package repo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitPath is what git itself says of dir (rev-parse --absolute-git-dir or
// --git-common-dir), links resolved, for comparing with Inspect's answer.
func gitPath(t *testing.T, dir string, env []string, flag string) string {
	out := runGit(t, dir, env, "rev-parse", "--path-format=absolute", flag)
	real, err := filepath.EvalSymlinks(out)
	require.NoError(t, err)
	return real
}

func resolved(t *testing.T, p string) string {
	real, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return real
}

// Inspect reads each layout git makes (git init, git worktree add, git
// submodule add with its absorbed git dir) as git does: the git dir and
// common dir it reports are git's own answer.
func TestInspect_AgreesWithGitOnItsLayouts(t *testing.T) {
	env := plainEnv(t)
	dir := newRepo(t, env)
	worktree := filepath.Join(filepath.Dir(dir), "wt")
	runGit(t, dir, env, "worktree", "add", "-q", worktree)
	sub := newRepo(t, env)
	runGit(t, dir, env, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
	module := filepath.Join(dir, "mod")

	for _, c := range []struct {
		name   string
		dir    string
		kind   Kind
		linked bool
	}{
		{"git init", dir, DotGitFolder, false},
		{"git worktree add", worktree, GitFile, true},
		{"git submodule add", module, GitFile, false},
	} {
		l, err := Inspect(c.dir)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.kind, l.Kind, c.name)
		assert.Equal(t, c.linked, l.Linked, c.name)
		assert.Equal(t, gitPath(t, c.dir, env, "--absolute-git-dir"), resolved(t, l.GitDir), c.name)
		assert.Equal(t, gitPath(t, c.dir, env, "--git-common-dir"), resolved(t, l.CommonDir), c.name)
		assert.Equal(t, resolved(t, l.GitDir), resolved(t, GitDirOf(c.dir)), c.name)
	}

	// A plain folder of the tree is no repository, and no error.
	l, err := Inspect(filepath.Join(dir, "sub"))
	require.NoError(t, err)
	assert.Equal(t, NoRepository, l.Kind)
	assert.Equal(t, filepath.Join(dir, "sub", ".git"), GitDirOf(filepath.Join(dir, "sub")))
}

// What git might judge otherwise than a plain reading is ErrUnsure: a
// .git link, a malformed gitfile, a gitfile naming nothing, a .git folder
// without HEAD. git itself refuses or treats each differently.
func TestInspect_UnsureOfTheUnusual(t *testing.T) {
	env := plainEnv(t)
	dir := newRepo(t, env)
	base := t.TempDir()
	folder := func(name string, setup func(d string)) string {
		d := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(d, 0o755))
		setup(d)
		return d
	}
	cases := map[string]string{
		"link": folder("link", func(d string) {
			require.NoError(t, os.Symlink(filepath.Join(dir, ".git"), filepath.Join(d, ".git")))
		}),
		"not a gitfile": folder("garbage", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, ".git"), []byte("hello\n"), 0o644))
		}),
		"empty gitdir": folder("empty", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, ".git"), []byte("gitdir: \n"), 0o644))
		}),
		"names nothing": folder("nothing", func(d string) {
			require.NoError(t, os.WriteFile(filepath.Join(d, ".git"), []byte("gitdir: ../missing\n"), 0o644))
		}),
		"no HEAD": folder("nohead", func(d string) {
			require.NoError(t, os.MkdirAll(filepath.Join(d, ".git", "objects"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(d, ".git", "refs"), 0o755))
		}),
	}
	for name, d := range cases {
		_, err := Inspect(d)
		assert.ErrorIs(t, err, ErrUnsure, name)
	}

	// A relative gitfile with CRLF line ends names its folder's neighbour,
	// as git reads it.
	d := folder("relative", func(d string) {
		rel, err := filepath.Rel(d, filepath.Join(dir, ".git"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, ".git"), []byte("gitdir: "+rel+"\r\n"), 0o644))
	})
	l, err := Inspect(d)
	require.NoError(t, err)
	assert.Equal(t, GitFile, l.Kind)
	assert.Equal(t, filepath.Join(dir, ".git"), filepath.Clean(l.GitDir))
	assert.Equal(t, resolved(t, filepath.Join(dir, ".git")), gitPath(t, d, env, "--absolute-git-dir"))
}

// Holds is true for every .git git may take for a repository (a folder, a
// gitfile, and what Inspect cannot be sure of: a link, a broken gitfile)
// and false only where there is no .git at all.
func TestHolds_EveryDotGitButNone(t *testing.T) {
	env := plainEnv(t)
	dir := newRepo(t, env)
	worktree := filepath.Join(filepath.Dir(dir), "wt")
	runGit(t, dir, env, "worktree", "add", "-q", worktree)
	root := t.TempDir()
	mk := func(name string, make func(dot string)) string {
		d := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(d, 0o755))
		make(filepath.Join(d, ".git"))
		return d
	}
	broken := mk("broken", func(dot string) { require.NoError(t, os.WriteFile(dot, []byte("not a gitfile"), 0o644)) })
	link := mk("link", func(dot string) { require.NoError(t, os.Symlink(filepath.Join(dir, ".git"), dot)) })
	empty := mk("empty", func(dot string) { require.NoError(t, os.Mkdir(dot, 0o755)) })
	none := mk("none", func(string) {})

	assert.True(t, Holds(dir), "git init")
	assert.True(t, Holds(worktree), "a linked worktree's gitfile")
	assert.True(t, Holds(broken), "a gitfile git may refuse")
	assert.True(t, Holds(link), "a .git link")
	assert.True(t, Holds(empty), "an empty .git folder")
	assert.False(t, Holds(none))
	assert.False(t, Holds(filepath.Join(root, "missing")))
}
