package private

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/capture/scan"
)

// TestListing_RoundTrip: every kind of listed path reads back as written,
// through a rewrite with AddListed; out-of-order paths spoil the listing,
// and a cut or extended one is refused.
func TestListing_RoundTrip(t *testing.T) {
	now := int64(1_800_000_000_000_000_000)
	file := func(mtime int64, ino uint64) scan.Stat {
		return scan.Stat{Mode: syscall.S_IFREG | 0o644, Size: 12, Mtime: mtime, Ctime: mtime + 5, Ino: ino, Dev: 2049}
	}
	gone := scan.Stat{Err: &os.PathError{Op: "lstat", Path: "x", Err: syscall.ENOENT}}
	entries := []struct {
		path string
		st   scan.Stat
		kind byte
	}{
		{"a.txt", file(now-10e9, 900), ListedFile},
		{"d/b.txt", file(now-20e9, 12), ListedFile}, // times and inodes going down
		{"d/c.txt", gone, ListedAbsent},
		{"d/e/f.txt", file(now-1, 13), ListedUnsure}, // too recent
		{"d/e/g", scan.Stat{Mode: syscall.S_IFDIR | 0o755, Mtime: now - 10e9}, ListedUnsure},
		{"z", scan.Stat{Mode: syscall.S_IFLNK | 0o777, Size: 3, Mtime: now - 30e9, Ctime: now - 30e9, Ino: 1 << 40, Dev: 1}, ListedFile},
	}
	recent := now - 2e9
	w := NewListingWriter(len(entries))
	for i := range entries {
		w.Add(entries[i].path, &entries[i].st, recent)
	}
	data := w.Bytes()
	require.NotNil(t, data)
	read := func(data []byte) []byte {
		rd, err := NewListingReader(data)
		require.NoError(t, err)
		again := NewListingWriterSized(len(data))
		i := 0
		for rd.Next() {
			l := rd.Listed()
			require.Equal(t, entries[i].path, string(l.Path))
			require.Equal(t, entries[i].kind, l.Kind, entries[i].path)
			require.Equal(t, entries[i].kind != ListedUnsure, l.Same(&entries[i].st), entries[i].path)
			moved := entries[i].st
			moved.Mtime++
			require.False(t, l.Kind == ListedFile && l.Same(&moved), entries[i].path)
			again.AddListed(l)
			i++
		}
		require.NoError(t, rd.Err())
		require.Equal(t, len(entries), i)
		return again.Bytes()
	}
	require.Equal(t, data, read(data))

	for cut := 4; cut < len(data); cut++ {
		rd, err := NewListingReader(data[:cut])
		require.NoError(t, err)
		n := 0
		for rd.Next() {
			n++
		}
		require.True(t, rd.Err() != nil || n < len(entries), "cut at %d", cut)
	}
	_, err := NewListingReader([]byte("VML\x01"))
	require.Error(t, err, "another format")

	bad := NewListingWriter(2)
	bad.Add("b", &entries[0].st, recent)
	bad.Add("a", &entries[0].st, recent)
	require.Nil(t, bad.Bytes(), "paths out of order")
}
