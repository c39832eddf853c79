// Package gittest runs the plain git command line for the unit tests of
// lib's packages, which check their results with git itself.
package gittest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Run runs git in dir with stdin and extra environment, fails the test when
// git fails, and returns git's trimmed output.
func Run(t *testing.T, dir, stdin string, env []string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	c.Stdin = strings.NewReader(stdin)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// CopyTree copies the folder src into dst, made if missing: folders,
// regular files with their modes and symbolic links, in plain file work.
// A repository made once with git, a copy of its own for each case.
func CopyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir() && rel == ".":
			return os.MkdirAll(to, fi.Mode().Perm())
		case fi.IsDir():
			return os.Mkdir(to, fi.Mode().Perm())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, fi.Mode().Perm())
		}
		return fmt.Errorf("%s is neither a folder, a file nor a link", p)
	}))
}
