package treewalk

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/treepath"
)

var ident = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}

func commitFiles(t *testing.T, dir string, files map[string]string) *git.Oid {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if c == "" {
			require.NoError(t, os.Remove(full))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	gittest.Run(t, dir, "", ident, "add", "-A")
	gittest.Run(t, dir, "", ident, "commit", "-q", "--allow-empty", "-m", "x")
	id, err := git.NewOid(gittest.Run(t, dir, "", ident, "rev-parse", "HEAD^{tree}"))
	require.NoError(t, err)
	return id
}

// DiffUnder emits what git diff-tree -r does, inside the folders asked
// for only; a Walker's cache gives the same answers twice.
func TestDiffUnder_AsGitDiffTree(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", ident, "init", "-q")
	a := commitFiles(t, dir, map[string]string{"top.txt": "1\n", "in/a.txt": "a\n", "in/deep/b.txt": "b\n", "out/c.txt": "c\n"})
	b := commitFiles(t, dir, map[string]string{"top.txt": "2\n", "in/a.txt": "", "in/deep/b.txt": "B\n", "in/new.txt": "n\n", "out/c.txt": "C\n"})
	want := strings.Split(gittest.Run(t, dir, "", ident, "diff-tree", "-r", "--name-only", a.String(), b.String()), "\n")
	sort.Strings(want)

	r, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer r.Free()
	odb, err := r.Odb()
	require.NoError(t, err)
	defer odb.Free()
	w := NewWalker(odb)
	for round := 0; round < 2; round++ {
		var all, under []string
		require.NoError(t, w.DiffUnder(a, b, nil, func(p string, _, _ Side) { all = append(all, p) }))
		require.NoError(t, w.DiffUnder(a, b, func(d string) bool { return strings.HasPrefix(d, "in/") },
			func(p string, s, t Side) { under = append(under, p) }))
		sort.Strings(all)
		assert.Equal(t, want, all)
		assert.Equal(t, []string{"in/a.txt", "in/deep/b.txt", "in/new.txt", "top.txt"}, under, "out/ is not read")
	}
	var sides []Side
	require.NoError(t, Diff(odb, a, b, func(p string, s, t Side) {
		if p == "in/a.txt" {
			sides = append(sides, s, t)
		}
	}))
	require.Len(t, sides, 2)
	assert.Equal(t, uint32(0o100644), sides[0].Mode)
	assert.Equal(t, gittest.Run(t, dir, "", ident, "rev-parse", a.String()+":in/a.txt"), sides[0].ID.String())
	assert.Equal(t, Side{}, sides[1], "deleted: absent on the new side")
}

// Diff emits git diff-tree -r's paths in path order (what sort.Strings
// gives, which a plan and its merges rely on) across the places the walk's
// order and the paths' differ: a file "a" beside "a.txt" and "a-b/", a
// file that becomes a folder of its name, and folders wholly added or
// deleted.
func TestDiff_PathOrderAsGit(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", ident, "init", "-q")
	a := commitFiles(t, dir, map[string]string{"a": "file\n", "a.txt": "1\n", "a-b/x": "x\n", "gone/deep/y": "y\n",
		"gone/z": "z\n", "k/l": "l\n", "k.c": "c\n"})
	require.NoError(t, os.Remove(filepath.Join(dir, "a")))
	b := commitFiles(t, dir, map[string]string{"a/in": "now a folder\n", "a.txt": "2\n", "a-b/x": "X\n",
		"gone/deep/y": "", "gone/z": "", "new/n/m": "m\n", "new/o": "o\n", "k/l": "L\n", "k.c": "C\n"})
	for _, pair := range [][2]*git.Oid{{a, b}, {b, a}} {
		want := strings.Split(gittest.Run(t, dir, "", ident, "diff-tree", "-r", "--name-only",
			pair[0].String(), pair[1].String()), "\n")
		sort.Strings(want)
		r, err := git.OpenRepository(dir)
		require.NoError(t, err)
		odb, err := r.Odb()
		require.NoError(t, err)
		var got []string
		require.NoError(t, Diff(odb, pair[0], pair[1], func(p string, _, _ Side) { got = append(got, p) }))
		// Count, then a diff of the same walker (its folders kept), as a
		// plan lists its changes.
		w := NewWalker(odb)
		n, size, err := w.Count(pair[0], pair[1])
		require.NoError(t, err)
		var again, asBytes []string
		require.NoError(t, w.DiffUnder(pair[0], pair[1], nil, func(p string, _, _ Side) { again = append(again, p) }))
		require.NoError(t, w.DiffBytes(pair[0], pair[1], func(p []byte, _, _ Side) { asBytes = append(asBytes, string(p)) }))
		odb.Free()
		r.Free()
		assert.Equal(t, want, got, "every path, once, in path order")
		assert.Equal(t, len(want), n, "Count")
		assert.Equal(t, len(strings.Join(want, "")), size, "Count's bytes")
		assert.Equal(t, want, again, "after Count")
		assert.Equal(t, want, asBytes, "DiffBytes")
	}
}

// A hand-made tree (git hash-object --literally) with a name twice is
// refused, also when the two are a file and a folder with other names
// between them in git's order; one whose entries are out of git's order
// diffs as the same tree in order does.
func TestDiff_HandMadeTrees(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", ident, "init", "-q")
	hash := func(typ, content string) *git.Oid {
		id, err := git.NewOid(gittest.Run(t, dir, content, ident, "hash-object", "-t", typ, "--literally", "-w", "--stdin"))
		require.NoError(t, err)
		return id
	}
	entry := func(mode, name string, id *git.Oid) string { return mode + " " + name + "\x00" + string(id[:]) }
	blob := hash("blob", "x\n")
	sub := hash("tree", entry("100644", "f", blob))
	r, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer r.Free()
	odb, err := r.Odb()
	require.NoError(t, err)
	defer odb.Free()
	for name, tree := range map[string]string{
		"side by side":      entry("100644", "n", blob) + entry("100644", "n", blob),
		"file, then folder": entry("100644", "n", blob) + entry("100644", "n.txt", blob) + entry("40000", "n", sub),
		"folder, then file": entry("40000", "n", sub) + entry("100644", "n", blob),
	} {
		err := Diff(odb, nil, hash("tree", tree), func(string, Side, Side) {})
		var bad *treepath.Error
		require.ErrorAs(t, err, &bad, name)
		assert.Equal(t, treepath.RuleDuplicate, bad.Rule, name)
		assert.Equal(t, "n", bad.Path, name)
	}
	ordered := hash("tree", entry("100644", "a.txt", blob)+entry("40000", "a", sub)+entry("100644", "b", blob))
	unordered := hash("tree", entry("100644", "b", blob)+entry("40000", "a", sub)+entry("100644", "a.txt", blob))
	var want, got []string
	require.NoError(t, Diff(odb, nil, ordered, func(p string, _, _ Side) { want = append(want, p) }))
	require.NoError(t, Diff(odb, nil, unordered, func(p string, _, _ Side) { got = append(got, p) }))
	assert.Equal(t, []string{"a.txt", "a/f", "b"}, want)
	assert.Equal(t, want, got)
}
