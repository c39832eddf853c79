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

// gitsTree is the tree git writes for base (a tree id, or "--empty") with
// the index lines info (update-index -z --index-info) applied, made in a
// scratch index of dir: what Apply must give for the same edits. An empty
// base is no index file, which git reads as read-tree --empty leaves it;
// base "" keeps the index the last call wrote (its tree's entries).
func gitsTree(t *testing.T, dir, base, info string) string {
	t.Helper()
	path := filepath.Join(dir, "scratch.index")
	idx := []string{"GIT_INDEX_FILE=" + path}
	switch base {
	case "--empty":
		if err := os.Remove(path); !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	case "":
	default:
		gittest.Run(t, dir, "", idx, "read-tree", base)
	}
	gittest.Run(t, dir, info, idx, "update-index", "-z", "--add", "--index-info")
	return gittest.Run(t, dir, "", idx, "write-tree")
}

// gitsTrees is gitsTree(t, dir, "--empty", info) for each of infos, from
// one scratch index of them all: info i applied under the folder "i/",
// whose tree in git's write-tree is the tree of info i alone (a tree's id
// names its entries only). One update-index, write-tree and ls-tree in
// all; an info that leaves nothing is the empty tree, as write-tree
// writes it.
func gitsTrees(t *testing.T, dir string, infos []string) []string {
	t.Helper()
	var all strings.Builder
	for i, info := range infos {
		for _, line := range strings.SplitAfter(info, "\x00") {
			if meta, path, ok := strings.Cut(line, "\t"); ok {
				fmt.Fprintf(&all, "%s\t%d/%s", meta, i, path)
			}
		}
	}
	top := gitsTree(t, dir, "--empty", all.String())
	sub := map[string]string{}
	for _, e := range strings.Split(gittest.Run(t, dir, "", nil, "ls-tree", "-z", top), "\x00") {
		if meta, name, ok := strings.Cut(e, "\t"); ok {
			sub[name] = meta[strings.LastIndexByte(meta, ' ')+1:]
		}
	}
	trees := make([]string, len(infos))
	for i := range infos {
		if trees[i] = sub[fmt.Sprint(i)]; trees[i] == "" {
			trees[i] = gittest.Run(t, dir, "", nil, "mktree")
		}
	}
	return trees
}

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
		{Path: "a.txt", Mode: 0o100755, Oid: blob},        // mode change
		{Path: "d/e/y.txt", Mode: 0, Oid: ""},             // delete
		{Path: "d/e/new.txt", Mode: 0o100644, Oid: blob},  // create in an existing folder
		{Path: "f", Mode: 0, Oid: ""},                     // a file becomes a folder
		{Path: "f/inside.txt", Mode: 0o100644, Oid: blob}, //
		{Path: "g/only.txt", Mode: 0, Oid: ""},            // a folder becomes a file
		{Path: "g", Mode: 0o120000, Oid: blob},            //
		{Path: "h/i/j/k.txt", Mode: 0, Oid: ""},           // a deep folder empties
		{Path: "n/m/new.txt", Mode: 0o100644, Oid: blob},  // new folders
	}
	var info strings.Builder
	for _, e := range edits {
		if e.Mode == 0 {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), e.Path)
		} else {
			fmt.Fprintf(&info, "%o %s\t%s\x00", e.Mode, e.Oid, e.Path)
		}
	}
	want := gitsTree(t, dir, base, info.String())

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
		all = append(all, Edit{Path: f})
	}
	got, err = Apply(repo, baseID, all)
	require.NoError(t, err)
	require.Equal(t, "4b825dc642cb6eb9a060e54bf8d69288fbee4904", got.String())
}

// TestApply_GitOrder checks names that sort differently as a folder and as
// a file (git compares a folder's name as if it ended in '/'), a path given
// twice (the last edit holds), and many new folders at once, against git's
// own index edit.
func TestApply_GitOrder(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	for _, f := range []string{"foo.txt", "foo/bar", "foo-x", "foo0", "b/c"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644))
	}
	gittest.Run(t, dir, "", nil, "add", "-A")
	base := gittest.Run(t, dir, "", nil, "write-tree")
	blob := gittest.Run(t, dir, "new content\n", nil, "hash-object", "-w", "--stdin")
	edits := []Edit{
		{Path: "foo/baz", Mode: 0o100644, Oid: blob},
		{Path: "b/c", Mode: 0o100755, Oid: blob},
		{Path: "b/c", Mode: 0o100644, Oid: blob}, // given twice: this one holds
		{Path: "fo", Mode: 0o100644, Oid: blob},
		{Path: "foo/bar/x", Mode: 0o100644, Oid: blob}, // a file becomes a folder
		{Path: "foo/bar", Mode: 0, Oid: ""},
	}
	raw, err := git.NewOid(blob)
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		// The object given by its raw id, as a large capture gives it.
		edits = append(edits, Edit{Path: fmt.Sprintf("new/d%d/e%d/f.txt", i%7, i), Mode: 0o100644, ID: *raw})
	}
	var info strings.Builder
	seen := map[string]bool{}
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		if seen[e.Path] {
			continue
		}
		seen[e.Path] = true
		if e.Mode == 0 {
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", 40), e.Path)
		}
	}
	for i, e := range edits {
		last := true
		for _, f := range edits[i+1:] {
			last = last && f.Path != e.Path
		}
		if e.Mode != 0 && last {
			fmt.Fprintf(&info, "%o %s\t%s\x00", e.Mode, blob, e.Path)
		}
	}
	want := gitsTree(t, dir, base, info.String())

	repo, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer repo.Free()
	baseID, _ := git.NewOid(base)
	got, err := Apply(repo, baseID, edits)
	require.NoError(t, err)
	require.Equal(t, want, got.String())
	// Every tree Apply wrote is one git reads back whole.
	gittest.Run(t, dir, "", nil, "ls-tree", "-r", got.String())
	gittest.Run(t, dir, "", nil, "fsck", "--no-dangling")
}

// TestApply_RefusesBadNames: names git never stores in a tree are an
// error, as libgit2's tree builder made them.
func TestApply_RefusesBadNames(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	blob := gittest.Run(t, dir, "x\n", nil, "hash-object", "-w", "--stdin")
	repo, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer repo.Free()
	for _, p := range []string{".git", "a/.GIT/x", "GIT~1", "a/../b", "a//b"} {
		_, err := Apply(repo, nil, []Edit{{Path: p, Mode: 0o100644, Oid: blob}})
		require.Error(t, err, p)
	}
}
