package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each tree a capture writes is the tree git writes for the same files
// (git add -A and git write-tree in a scratch index) and passes git fsck
// --strict: names that sort differently as folders (a, a.b, a-b, a0), bytes
// >= 0x80, the executable bit, links, deep paths, then a folder's last file
// deleted and a file and a folder swapped.
func TestCapture_TreesAsGitWritesThem(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	deep := strings.Repeat("d/", 60) + "f.txt"
	files := []string{"a.b", "a-b", "a0", "a/x", "a/y/z", "b", "\xc3\xa9t\xc3\xa9", "raw\x80\xff", "x y/sp", "gone/only", deep}
	for _, f := range files {
		env.Write(f, f+"\n")
	}
	require.NoError(t, os.Chmod(env.Path("a0"), 0o755))
	require.NoError(t, os.Symlink("a/x", env.Path("link")))
	env.Commit("base")
	scratch := filepath.Join(t.TempDir(), "scratch.index")
	gitTree := func() string {
		r := env.run(env.Dir, []string{"GIT_INDEX_FILE=" + scratch}, "git", "add", "-A")
		require.Equal(t, 0, r.Code, r.Stderr)
		r = env.run(env.Dir, []string{"GIT_INDEX_FILE=" + scratch}, "git", "write-tree")
		require.Equal(t, 0, r.Code, r.Stderr)
		return strings.TrimSpace(r.Stdout)
	}
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	require.Equal(t, gitTree(), env.CheckpointTree("a1", 1))
	steps := []func(){
		func() { // new names beside the old ones, one mode changed
			env.Write("a/0", "n\n")
			env.Write("a.a/q", "n\n")
			env.Write("a!", "n\n")
			require.NoError(t, os.Chmod(env.Path("a.b"), 0o755))
		},
		func() { // a folder's last file deleted; a file becomes a folder
			require.NoError(t, os.Remove(env.Path("gone/only")))
			require.NoError(t, os.Remove(env.Path("gone")))
			require.NoError(t, os.Remove(env.Path("a0")))
			env.Write("a0/inside", "n\n")
			require.NoError(t, os.Remove(env.Path(deep)))
		},
		func() { // a folder becomes a file
			require.NoError(t, os.RemoveAll(env.Path("a")))
			env.Write("a", "now a file\n")
		},
	}
	for i, step := range steps {
		step()
		env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
		require.Equal(t, gitTree(), env.CheckpointTree("a1", i+2), "step %d", i+1)
	}
	env.Git("fsck", "--strict", "--no-dangling")
}
