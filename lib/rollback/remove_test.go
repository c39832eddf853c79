package rollback

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/treepath"
)

// removeFiles deletes exactly the files it is given, in path order with a
// folder's files split by a subfolder's, and then each folder that
// emptied, up to the top (which stays); a folder that still holds
// something stays, and so do those above it; a folder swapped for a link
// is never followed (the files through it count as gone, the link stays),
// and a folder where a file was is left. The fault point is reached once
// a file, the folder behind the link included.
func TestRemoveFiles_FolderByFolder(t *testing.T) {
	base := t.TempDir()
	top, outside := filepath.Join(base, "top"), filepath.Join(base, "outside")
	files := []string{"a/b/c/1", "a/b/c/2", "a/b/d", "a/e/f", "a/z", "keep/k", "keep/sub/s", "top.txt",
		"was-file/inner", "x/y/z/deep"}
	for _, f := range append(files, "../outside/victim") {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(top, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(top, f), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(outside, filepath.Join(top, "link")))
	require.NoError(t, os.MkdirAll(filepath.Join(top, "empty-before"), 0o755))
	dels := []string{"a/b/c/1", "a/b/c/2", "a/b/d", "a/e/f", "a/z", "keep/sub/s", "link/victim", "top.txt",
		"was-file", "x/y/z/deep"}
	root, err := treepath.Open(top)
	require.NoError(t, err)
	defer root.Close()
	points := 0
	require.NoError(t, removeFiles(root, dels, func(string) error { points++; return nil }, nil, ""))
	require.Equal(t, len(dels), points)

	var left []string
	require.NoError(t, filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(top, p)
		if d.IsDir() {
			rel += "/"
		}
		left = append(left, rel)
		return nil
	}))
	sort.Strings(left)
	require.Equal(t, []string{"./", "empty-before/", "keep/", "keep/k", "link", "was-file/", "was-file/inner"}, left)
	b, err := os.ReadFile(filepath.Join(outside, "victim"))
	require.NoError(t, err)
	require.Equal(t, "x", string(b), "nothing is reached through the link")
}
