package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadFolder_AsReadDir: readFolder lists what os.ReadDir lists, with
// the same types, over more entries than one read of its buffer holds;
// it stats the folder itself, and refuses a link to a folder.
func TestReadFolder_AsReadDir(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2000; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-longish-name-%04d", i)), nil, 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.Symlink("sub", filepath.Join(dir, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".hidden"), nil, 0o644))

	var st syscall.Stat_t
	got, err := readFolder(dir, &st, make([]byte, 4096))
	require.NoError(t, err)
	var want syscall.Stat_t
	require.NoError(t, syscall.Lstat(dir, &want))
	require.Equal(t, statOf(&want), statOf(&st))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	describe := func(name string, k entryKind) string { return fmt.Sprintf("%s %d", name, k) }
	var wantList, gotList []string
	for _, e := range entries {
		k := kindOther
		switch t := e.Type(); {
		case t.IsDir():
			k = kindDir
		case t.IsRegular():
			k = kindFile
		case t&os.ModeSymlink != 0:
			k = kindLink
		}
		wantList = append(wantList, describe(e.Name(), k))
	}
	for _, e := range got {
		gotList = append(gotList, describe(e.name, e.kind))
	}
	sort.Strings(gotList)
	require.Equal(t, wantList, gotList)
	require.Len(t, got, 2004)

	_, err = readFolder(filepath.Join(dir, "link"), &st, make([]byte, 4096))
	require.Error(t, err, "a link to a folder is not read through")
	_, err = readFolder(filepath.Join(dir, "fifo"), &st, make([]byte, 4096))
	require.Error(t, err)
}
