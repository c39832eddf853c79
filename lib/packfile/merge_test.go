package packfile

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// writeBlobs writes a pack of the given contents and returns its name.
func writeBlobs(t *testing.T, dir string, contents ...string) string {
	t.Helper()
	w, err := Create(dir, len(contents))
	require.NoError(t, err)
	for _, c := range contents {
		require.NoError(t, w.Add(objectID("blob", []byte(c)), Blob, []byte(c)))
	}
	name, err := w.Finish()
	require.NoError(t, err)
	return name
}

// Merged packs hold every object of their sources once (an object in two
// of them too), git reads the result with its strictest checks, and the
// index git makes of it is the one Merge wrote.
func TestMerge_GitReadsEveryObjectOnce(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	big := strings.Repeat("large and compressible\n", 20000)
	a := writeBlobs(t, packDir, "one\n", "two\n", big)
	b := writeBlobs(t, packDir, "two\n", "three\n")
	c := writeBlobs(t, packDir, "")

	w, n, err := Merge(packDir, []string{a, b, c}, Options{Prefix: "tmp_pack_test_", Sync: true})
	require.NoError(t, err)
	require.Equal(t, 5, n)
	// Sealed, not installed: only temporary files so far.
	_, err = os.Stat(filepath.Join(packDir, w.Name()+".idx"))
	require.True(t, os.IsNotExist(err))
	require.NoError(t, w.Install())
	for _, p := range []string{a, b, c} {
		require.NoError(t, os.Remove(filepath.Join(packDir, p+".idx")))
		require.NoError(t, os.Remove(filepath.Join(packDir, p+".pack")))
	}
	out := gittest.Run(t, dir, "", nil, "verify-pack", "-v", filepath.Join(packDir, w.Name()+".idx"))
	require.Contains(t, out, "non delta: 5 objects")
	gittest.Run(t, dir, "", nil, "index-pack", "--strict", "-o", filepath.Join(t.TempDir(), "x.idx"),
		filepath.Join(packDir, w.Name()+".pack"))
	for _, c := range []string{"one\n", "two\n", "three\n", "", big} {
		id := objectID("blob", []byte(c))
		require.Equal(t, fmt.Sprint(len(c)), gittest.Run(t, dir, "", nil, "cat-file", "-s", hex.EncodeToString(id[:])))
	}
	entries, err := os.ReadDir(packDir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "temporary files left")
}

// A damaged entry stops the merge and leaves nothing behind.
func TestMerge_DamagedEntryRefused(t *testing.T) {
	dir := t.TempDir()
	a := writeBlobs(t, dir, "one\n", "two\n")
	p := filepath.Join(dir, a+".pack")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[14] ^= 0xff
	require.NoError(t, os.Chmod(p, 0o644))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	_, _, err = Merge(dir, []string{a}, Options{})
	require.ErrorContains(t, err, "CRC")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2)
}
