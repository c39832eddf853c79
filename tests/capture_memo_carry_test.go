package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCapture_MemoAndCarryKeepToGitDashC: a capture run under git -c
// (GIT_CONFIG_PARAMETERS) converts files as git add under the same
// settings does, also when the last capture, made without them, left a
// memo and a listing whose stat data all still match: the memo's key
// and the carry's held only the settings files.
func TestCapture_MemoAndCarryKeepToGitDashC(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	env.Write("u/crlf.txt", "a\r\nb\r\n")
	env.Write("u/plain.txt", "plain\n")
	tree, _ := carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)
	dashC := append(extra, "GIT_CONFIG_PARAMETERS='core.autocrlf'='input'")
	tree, _ = carryCapture(t, env, dashC, timings)
	// git add -A under the same -c, in a scratch index.
	scratch := filepath.Join(env.Root, "dashc.index")
	r := env.run(env.Dir, []string{"GIT_INDEX_FILE=" + scratch}, "git", "-c", "core.autocrlf=input", "add", "-A")
	require.Equal(t, 0, r.Code, r.Stderr)
	want := env.run(env.Dir, []string{"GIT_INDEX_FILE=" + scratch}, "git", "write-tree")
	require.Equal(t, strings.TrimSpace(want.Stdout), tree, "under git -c core.autocrlf=input")
	require.Equal(t, "a\nb\n", env.GitRaw("cat-file", "blob", tree+":u/crlf.txt").Stdout)
	// And back: without -c the CRLF bytes are stored as they are.
	tree, _ = carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree, "without -c again")
	env.CheckObjects(t)
}

// TestCapture_TrackedBehindALinkIsGone: a tracked folder replaced by a
// link (to the folder moved away, or to one outside the tree) makes its
// files deleted for git, which never follows a link on a path's way; a
// capture read them through the link, and stored a file outside the
// tree when the link itself was ignored; the quick scan's stat check of
// tracked files, in a folder no scan reads, took them for unchanged.
func TestCapture_TrackedBehindALinkIsGone(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	outside := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "a.txt"), []byte("secret outside the tree\n"), 0o644))
	env.Write(".gitignore", "/t\n/t2\n/o\n/build/\n")
	env.Write("build/t/a.txt", "tracked in an ignored folder\n")
	env.Write("t/a.txt", "tracked a\n")
	env.Write("t/b.txt", "tracked b\n")
	env.Write("o/a.txt", "tracked o\n")
	env.Git("add", "-f", ".gitignore", "t", "o", "build")
	env.Commit("base")
	env.Write("u/x.txt", "untracked\n")
	env.Write("t/b.txt", "tracked b, edited\n")
	tree, _ := carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)

	tree, _ = carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)
	// In a folder the quick scan never reads (ignored): only its stat
	// check of the tracked files can see it.
	require.NoError(t, os.Rename(env.Path("build/t"), env.Path("build/t2")))
	require.NoError(t, os.Symlink("t2", env.Path("build/t")))
	tree, _ = carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree, "a link in an ignored folder")
	require.NoError(t, os.Rename(env.Path("t"), env.Path("t2")))
	require.NoError(t, os.Symlink("t2", env.Path("t")))
	require.NoError(t, os.RemoveAll(env.Path("o")))
	require.NoError(t, os.Symlink(outside, env.Path("o")))
	for i := 0; i < 3; i++ {
		tree, _ = carryCapture(t, env, extra, timings)
		require.Equal(t, env.RecipeTree(), tree, "capture %d after the links", i+1)
		env.Write("u/x.txt", strings.Repeat("x", i+2)+"\n")
	}
	require.NotContains(t, env.Git("ls-tree", "-r", "--name-only", tree), "o/a.txt")
	env.CheckObjects(t)
}

// TestCapture_CarryKeepsAFolderWhereAFileWas: a tracked file replaced by
// a folder of new files, captured once; the next capture carries those
// files, and the tracked path, listed again (a folder now), is removed
// from the last capture's tree, where it is that folder: the removal
// took the carried files with it.
func TestCapture_CarryKeepsAFolderWhereAFileWas(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	env.Write("file", "tracked file\n")
	env.Commit("base")
	env.Remove("file")
	env.Write("file/sub/deeper/x", "nested\n")
	env.Write("file/y", "beside\n")
	tree, _ := carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)
	for i := 0; i < 2; i++ {
		tree, _ = carryCapture(t, env, extra, timings)
		require.Equal(t, env.RecipeTree(), tree, "capture %d after the first", i+1)
	}
	env.Write("file/y", "beside, edited\n")
	tree, stored := carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree, "one file of the folder edited")
	require.GreaterOrEqual(t, stored, 0, "the capture carried")
	env.CheckObjects(t)
}
