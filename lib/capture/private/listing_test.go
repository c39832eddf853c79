package private

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

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
	recent := time.Unix(0, now) // when the lstat calls began
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

// TestListing_Streamed: a listing read from a file a buffer at a time
// (a reader giving one byte per call, too) reads back as written, and one
// written to a file is the same bytes; a digest that does not match, a
// cut, or a file extended with zeros (truncate(2)) ends in an error,
// which a reader knows once Next returned false.
func TestListing_Streamed(t *testing.T) {
	now := int64(1_800_000_000_000_000_000)
	var paths []string
	for i := 0; i < 20000; i++ {
		paths = append(paths, fmt.Sprintf("d%03d/e%02d/%s%05d.txt", i/200, i%7, strings.Repeat("x", i%300), i))
	}
	sort.Strings(paths)
	stat := func(i int) scan.Stat {
		return scan.Stat{Mode: syscall.S_IFREG | 0o644, Size: int64(i), Mtime: now - int64(i)*1e6, Ctime: now, Ino: uint64(5000 + i), Dev: 2049}
	}
	later := time.Unix(0, now).Add(5 * time.Second) // every file past racy
	mem := NewListingWriter(len(paths))
	p := &Index{index: filepath.Join(t.TempDir(), "k.index")}
	file, err := p.CreateListing()
	require.NoError(t, err)
	for i, path := range paths {
		st := stat(i)
		mem.Add(path, &st, later)
		file.Add(path, &st, later)
	}
	data := mem.Bytes()
	require.Nil(t, file.Bytes(), "written to a file")
	sum, err := file.finish()
	require.NoError(t, err)
	written, err := os.ReadFile(file.tmp)
	require.NoError(t, err)
	require.Equal(t, data, written)
	require.Equal(t, listingSum(data), sum)

	readAll := func(src io.Reader, want string) (int, error) {
		rd, err := newListingReaderFrom(src, want)
		if err != nil {
			return 0, err
		}
		n := 0
		for rd.Next() {
			st := stat(n)
			require.Equal(t, paths[n], string(rd.Listed().Path))
			require.True(t, rd.Listed().Same(&st), paths[n])
			n++
		}
		return n, rd.Err()
	}
	n, err := readAll(bytes.NewReader(data), sum)
	require.NoError(t, err)
	require.Equal(t, len(paths), n)
	n, err = readAll(iotest.OneByteReader(bytes.NewReader(data)), sum)
	require.NoError(t, err)
	require.Equal(t, len(paths), n)

	_, err = readAll(bytes.NewReader(data), listingSum(data[:len(data)-1]))
	require.Error(t, err, "another listing's digest")
	cut := data[:len(data)/2]
	_, err = readAll(bytes.NewReader(cut), listingSum(cut))
	require.Error(t, err, "cut")
	long := append(append([]byte(nil), data...), make([]byte, 1<<20)...)
	_, err = readAll(bytes.NewReader(long), listingSum(long))
	require.Error(t, err, "zeros after the listing")

	abandoned, err := p.CreateListing()
	require.NoError(t, err)
	abandoned.Abandon()
	_, err = os.Stat(abandoned.tmp)
	require.True(t, os.IsNotExist(err), "an abandoned listing's file is removed")
}
