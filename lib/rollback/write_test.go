package rollback

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treepath"
)

// TestWriteThroughStageDescriptor: git's checkout-index writes into the
// stage it is given as its descriptor 3 (--prefix=/proc/self/fd/3/):
// nested folders it makes itself, a link, an executable and a file through
// a smudge filter; each is then placed in the tree from the stage's
// descriptor, and the stage is gone from tmp/.
func TestWriteThroughStageDescriptor(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	gittest.Run(t, dir, "", env, "init", "-q")
	gittest.Run(t, dir, "", env, "config", "filter.upper.smudge", "tr a-z A-Z")
	gittest.Run(t, dir, "", env, "config", "filter.upper.clean", "cat")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.up filter=upper\n"), 0o644))
	blob := func(content string) string {
		return gittest.Run(t, dir, content, env, "hash-object", "-w", "--no-filters", "--stdin")
	}
	writes := []entry{
		{"a/b/c/deep.txt", 0o100644, blob("deep\n")},
		{"run.sh", 0o100755, blob("#!/bin/sh\necho hi\n")},
		{"ln", 0o120000, blob("a/b/c/deep.txt")},
		{"s/x.up", 0o100644, blob("hello\n")},
	}
	ctx := context.Background()
	r, err := repo.Open(ctx, dir, env)
	require.NoError(t, err)
	tmp := filepath.Join(r.StateDir, "tmp")
	ap := newApplier(ctx, r, tmp)
	root, err := treepath.Open(r.Top)
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, ap.write(root, writes, noPoint))

	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, "deep\n", read("a/b/c/deep.txt"))
	require.Equal(t, "HELLO\n", read("s/x.up"), "the smudge filter ran")
	fi, err := os.Lstat(filepath.Join(dir, "run.sh"))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular() && fi.Mode().Perm()&0o100 != 0, "run.sh is %v", fi.Mode())
	fi, err = os.Lstat(filepath.Join(dir, "a/b/c/deep.txt"))
	require.NoError(t, err)
	require.Zero(t, fi.Mode().Perm()&0o111, "deep.txt is %v", fi.Mode())
	target, err := os.Readlink(filepath.Join(dir, "ln"))
	require.NoError(t, err)
	require.Equal(t, "a/b/c/deep.txt", target)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the stage and the index are removed")
}
