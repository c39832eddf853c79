package treeedit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// TestApply checks Apply against git's own index edit of the same
// tree: read-tree, update-index --index-info, write-tree.
func TestApply(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	for _, f := range []string{"a.txt", "d/x.txt", "d/e/y.txt", "d/e/z.txt", "f", "g/only.txt", "h/i/j/k.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644))
	}
	gittest.Run(t, dir, "", nil, "add", "-A")
	base := gittest.Run(t, dir, "", nil, "write-tree")
	blob := gittest.Run(t, dir, "new content\n", nil, "hash-object", "-w", "--stdin")
	edits := []Edit{
		{"a.txt", 0o100755, blob},        // mode change
		{"d/e/y.txt", 0, ""},             // delete
		{"d/e/new.txt", 0o100644, blob},  // create in an existing folder
		{"f", 0, ""},                     // a file becomes a folder
		{"f/inside.txt", 0o100644, blob}, //
		{"g/only.txt", 0, ""},            // a folder becomes a file
		{"g", 0o120000, blob},            //
		{"h/i/j/k.txt", 0, ""},           // a deep folder empties
		{"n/m/new.txt", 0o100644, blob},  // new folders
	}
	var info strings.Builder
	for _, e := range edits {
		if e.Mode == 0 {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), e.Path)
		} else {
			fmt.Fprintf(&info, "%o %s\t%s\x00", e.Mode, e.Oid, e.Path)
		}
	}
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "tmp.index")}
	gittest.Run(t, dir, "", idx, "read-tree", base)
	gittest.Run(t, dir, info.String(), idx, "update-index", "-z", "--index-info")
	want := gittest.Run(t, dir, "", idx, "write-tree")

	repo, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer repo.Free()
	baseID, _ := git.NewOid(base)
	got, err := Apply(repo, baseID, edits)
	require.NoError(t, err)
	require.Equal(t, want, got.String())
	// Removing everything gives the empty tree.
	all := []Edit{}
	for _, f := range strings.Split(gittest.Run(t, dir, "", nil, "ls-tree", "-r", "--name-only", base), "\n") {
		all = append(all, Edit{f, 0, ""})
	}
	got, err = Apply(repo, baseID, all)
	require.NoError(t, err)
	require.Equal(t, "4b825dc642cb6eb9a060e54bf8d69288fbee4904", got.String())
}
