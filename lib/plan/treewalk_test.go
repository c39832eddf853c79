package plan

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/repo"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// TestDiffTreesMatchesGit compares the in-process diff with git diff-tree
// -r --raw on trees that trade files, folders, symlinks and modes.
func TestDiffTreesMatchesGit(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	write := func(rel, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644))
	}
	for _, f := range []string{"a", "d/x", "d/e/y", "f", "g/h", "same/s", "m"} {
		write(f, f+"\n")
	}
	run(t, dir, "add", "-A")
	one := run(t, dir, "write-tree")
	require.NoError(t, os.Remove(filepath.Join(dir, "f")))
	write("f/inside", "now a folder\n")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "g")))
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "g")))
	require.NoError(t, os.Chmod(filepath.Join(dir, "m"), 0o755))
	write("d/e/y", "changed\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "d/x")))
	write("new/deep/z", "new\n")
	run(t, dir, "add", "-A")
	two := run(t, dir, "write-tree")

	var want []string
	raw := run(t, dir, "diff-tree", "-r", "--no-renames", "--raw", "--full-index", one, two)
	for _, l := range strings.Split(raw, "\n") {
		meta, path, _ := strings.Cut(l, "\t")
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		want = append(want, f[0]+" "+f[1]+" "+f[2]+" "+f[3]+" "+path)
	}
	r := repo.New(repo.Paths{Top: dir, GitDir: filepath.Join(dir, ".git")}, os.Environ())
	defer r.Free()
	list, err := diffTrees(context.Background(), r, one, two)
	require.NoError(t, err)
	var got []string
	zero := strings.Repeat("0", 40)
	for _, c := range list {
		so, to := c.SOid.String(), c.TOid.String()
		if c.SMode == 0 {
			require.Equal(t, zero, so)
		}
		if c.TMode == 0 {
			require.Equal(t, zero, to)
		}
		got = append(got, strings.Join([]string{oct(c.SMode), oct(c.TMode), so, to, c.Path}, " "))
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got)
}

func oct(m uint32) string {
	s := strings.TrimLeft(strings.Repeat("0", 6)+strconvOct(m), "")
	return s[len(s)-6:]
}

func strconvOct(m uint32) string {
	if m == 0 {
		return "0"
	}
	var b []byte
	for m > 0 {
		b = append([]byte{byte('0' + m%8)}, b...)
		m /= 8
	}
	return string(b)
}
