package treepath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestGone_RealErrors: the errors the file system gives for a missing
// path and for a path under a file, and a Root's ErrNotDir, are gone; a
// permission error is not.
func TestGone_RealErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, missing := os.Lstat(filepath.Join(dir, "missing"))
	_, underFile := os.Lstat(filepath.Join(file, "child"))
	_, readUnderFile := os.ReadFile(filepath.Join(file, "child"))

	root, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, rootUnderFile := root.Lstat("file/child")

	for _, c := range []struct {
		name         string
		err          error
		notDir, gone bool
	}{
		{"missing", missing, false, true},
		{"lstat under a file", underFile, true, true},
		{"read under a file", readUnderFile, true, true},
		{"root under a file", rootUnderFile, true, true},
		{"wrapped", fmt.Errorf("read x: %w", underFile), true, true},
		{"permission", os.ErrPermission, false, false},
		{"other", errors.New("boom"), false, false},
		{"nil", nil, false, false},
	} {
		if got := NotDir(c.err); got != c.notDir {
			t.Errorf("%s: NotDir(%v) = %v, want %v", c.name, c.err, got, c.notDir)
		}
		if got := Gone(c.err); got != c.gone {
			t.Errorf("%s: Gone(%v) = %v, want %v", c.name, c.err, got, c.gone)
		}
	}
}
