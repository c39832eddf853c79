//go:build venomtest

package packfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// TestInstall_IndexGoneLeavesNoPackWithoutIndex: git prune deletes every
// objects/pack/tmp_* file, a pack's index still under its temporary name
// included, between the pack's rename and the index's. The install fails
// (its caller writes the pack again) and must not leave the renamed pack
// behind with no index: git ignores it for good and reports it as
// garbage.
func TestInstall_IndexGoneLeavesNoPackWithoutIndex(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	pause := filepath.Join(t.TempDir(), "paused")
	t.Setenv("VENOM_TEST_PAUSE_AT", "test-pack-renamed")
	t.Setenv("VENOM_TEST_PAUSE_FILE", pause)
	t.Setenv("VENOM_TEST_PAUSE_RESUME", "1")

	w, err := CreateWith(packDir, 1, Options{InstallPoint: "test-pack-renamed"})
	require.NoError(t, err)
	data := []byte("a blob whose index git prune takes\n")
	require.NoError(t, w.Add(objectID("blob", data), Blob, data))
	done := make(chan error, 1)
	go func() { _, err := w.Finish(); done <- err }()
	for {
		if _, err := os.Stat(pause); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// What git prune --expire=now does to the index's temporary file.
	tmps, err := filepath.Glob(filepath.Join(packDir, "tmp_*"))
	require.NoError(t, err)
	require.Len(t, tmps, 1, "the index, still under its temporary name")
	require.NoError(t, os.Remove(tmps[0]))
	require.NoError(t, os.Remove(pause))
	require.ErrorIs(t, <-done, os.ErrNotExist)

	left, err := os.ReadDir(packDir)
	require.NoError(t, err)
	require.Empty(t, left)
	count := gittest.Run(t, dir, "", nil, "count-objects", "-v")
	require.Contains(t, count, "garbage: 0")
	require.False(t, strings.Contains(count, "no corresponding .idx"), count)
}
