// Package gittest runs the plain git command line for the unit tests of
// lib's packages, which check their results with git itself.
package gittest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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

// Blobs reads the blobs ids names with one git cat-file --batch in dir
// (environ: git's whole environment, nil for this process's) and fails
// the test when git fails or an id names no blob: their contents, byte
// for byte, in the order of ids.
func Blobs(t *testing.T, dir string, environ []string, ids ...string) [][]byte {
	t.Helper()
	c := exec.Command("git", "cat-file", "--batch")
	c.Dir, c.Env = dir, environ
	c.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	require.NoError(t, err, "git cat-file --batch: %s", stderr.String())
	r := bufio.NewReader(bytes.NewReader(out))
	blobs := make([][]byte, len(ids))
	for i, id := range ids {
		header, err := r.ReadString('\n')
		require.NoError(t, err, "git cat-file --batch ended before %s", id)
		var oid, kind string
		var size int
		_, err = fmt.Sscanf(header, "%s %s %d\n", &oid, &kind, &size)
		require.NoError(t, err, "git cat-file --batch about %s: %q", id, header)
		require.Equal(t, [2]string{id, "blob"}, [2]string{oid, kind}, "git cat-file --batch about %s: %q", id, header)
		blobs[i] = make([]byte, size+1)
		_, err = io.ReadFull(r, blobs[i])
		require.NoError(t, err, "git cat-file --batch about %s", id)
		require.Equal(t, byte('\n'), blobs[i][size], "git cat-file --batch about %s", id)
		blobs[i] = blobs[i][:size]
	}
	return blobs
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
