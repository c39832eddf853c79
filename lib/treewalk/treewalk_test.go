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
	assert.Equal(t, gittest.Run(t, dir, "", ident, "rev-parse", a.String()+":in/a.txt"), sides[0].Oid)
	assert.Equal(t, Side{}, sides[1], "deleted: absent on the new side")
}
