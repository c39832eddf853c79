package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// trashDir is a test's temporary folder, symlinks resolved. With
// VENOM_KEEP_TRASH=1 (git-lfs's KEEPTRASH) a failed test keeps it and logs
// its path; t.TempDir would remove it whatever the outcome.
func trashDir(t *testing.T) string {
	t.Helper()
	if os.Getenv("VENOM_KEEP_TRASH") == "" {
		root, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		return root
	}
	root, err := os.MkdirTemp("", "venom-trash-")
	require.NoError(t, err)
	root, err = filepath.EvalSymlinks(root)
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("VENOM_KEEP_TRASH: kept %s", root)
			return
		}
		os.RemoveAll(root)
	})
	return root
}
