//go:build linux && (amd64 || arm64)

package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain asks for the ring, off by default (uring_linux.go), for every
// test of the package: they ran through it when it was on.
func TestMain(m *testing.M) {
	os.Setenv("VENOM_TEST_URING", "1")
	os.Exit(m.Run())
}

// TestLstat_RingAsFstatat: the ring's answers are fstatat's, path for
// path, for files, links (dangling too), folders, a FIFO, paths gone,
// under a file, and under a folder replaced by a link (gone, as for git),
// across several batches and folders.
func TestLstat_RingAsFstatat(t *testing.T) {
	if sharedRing() == nil {
		t.Skip("io_uring is not to be had here: LstatInto stats each path itself")
	}
	top := t.TempDir()
	var paths []string
	write := func(rel string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(top, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(top, rel), []byte(rel), 0o644))
	}
	for i := 0; i < 2500; i++ {
		rel := fmt.Sprintf("d%02d/f%04d.txt", i/100, i)
		write(rel)
		paths = append(paths, rel)
	}
	write("top.txt")
	write("real/x.txt")
	require.NoError(t, os.Symlink("real", filepath.Join(top, "link")))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(top, "d00/dangling")))
	require.NoError(t, os.Symlink("../top.txt", filepath.Join(top, "d01/up")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(top, "d02/fifo"), 0o644))
	paths = append(paths, "top.txt", "real/x.txt", "link/x.txt", "link", "d00/dangling", "d01/up", "d02/fifo",
		"d03", "missing.txt", "nofolder/x.txt", "top.txt/under", "d04/f0400.txt/under", "d05/gone.txt")
	sort.Strings(paths)
	changes := make([]Change, len(paths))
	for i, p := range paths {
		changes[i] = Change{Path: p}
	}
	base, err := syscall.Open(top, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(base)
	ring := make([]Stat, len(changes))
	require.True(t, ringStat(top, base, len(changes), func(i int) string { return changes[i].Path },
		func(i int, st *syscall.Stat_t, err error) { ring[i] = statFrom(changes[i].Path, st, err) }))
	each := make([]Stat, len(changes))
	lstatEach(top, base, changes, each)
	for i := range changes {
		require.Equal(t, each[i], ring[i], changes[i].Path)
	}
	require.Error(t, ring[sort.SearchStrings(paths, "link/x.txt")].Err, "beneath a link: gone")
	require.NoError(t, ring[sort.SearchStrings(paths, "d02/fifo")].Err)
}

// TestLstat_RingLongNameAsFstatat: a listed name longer than PATH_MAX
// (an index entry can hold one) is refused by the kernel as the ring
// takes it in, not when it runs: the ring must still answer every path
// as fstatat does, and not wait for completions never submitted.
func TestLstat_RingLongNameAsFstatat(t *testing.T) {
	if sharedRing() == nil {
		t.Skip("io_uring is not to be had here")
	}
	top := t.TempDir()
	var paths []string
	for i := 0; i < 200; i++ {
		rel := fmt.Sprintf("f%04d", i)
		require.NoError(t, os.WriteFile(filepath.Join(top, rel), nil, 0o644))
		paths = append(paths, rel)
	}
	paths = append(paths[:100], append([]string{"f0099" + strings.Repeat("x", 5000)}, paths[100:]...)...)
	changes := make([]Change, len(paths))
	for i, p := range paths {
		changes[i] = Change{Path: p}
	}
	base, err := syscall.Open(top, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(base)
	ring := make([]Stat, len(changes))
	finished := make(chan bool, 1)
	go func() {
		finished <- ringStat(top, base, len(changes), func(i int) string { return changes[i].Path },
			func(i int, st *syscall.Stat_t, err error) { ring[i] = statFrom(changes[i].Path, st, err) })
	}()
	select {
	case ok := <-finished:
		require.True(t, ok)
	case <-time.After(20 * time.Second):
		t.Fatal("ringLstat still waiting after 20 s")
	}
	each := make([]Stat, len(changes))
	lstatEach(top, base, changes, each)
	for i := range changes {
		require.Equal(t, each[i], ring[i], changes[i].Path[:min(len(changes[i].Path), 40)])
	}
	// And the ring (if kept) still answers right afterwards.
	again := make([]Stat, 200)
	LstatInto(top, changes[:100], again)
	for i := range 100 {
		require.Equal(t, each[i], again[i])
	}
}

// TestLstat_RingNeverThroughALinkUnderSwaps: while another goroutine keeps
// swapping a folder of the tree for a link to a folder outside it (the
// same names, other inodes), every answer the ring gives for a path in
// that folder is the real folder's file or "gone", never the file the
// link leads to: each folder is opened beneath the top, no link
// followed, and each statx is made in that open folder.
func TestLstat_RingNeverThroughALinkUnderSwaps(t *testing.T) {
	if sharedRing() == nil {
		t.Skip("io_uring is not to be had here")
	}
	top, outside := t.TempDir(), t.TempDir()
	var paths []string
	inside := map[uint64]bool{}
	for _, d := range []string{"d", "d/e"} {
		require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(outside, strings.TrimPrefix(d, "d")), 0o755))
		for i := 0; i < 300; i++ {
			rel := fmt.Sprintf("%s/f%03d", d, i)
			require.NoError(t, os.WriteFile(filepath.Join(top, rel), nil, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(outside, strings.TrimPrefix(rel, "d")), nil, 0o644))
			var st syscall.Stat_t
			require.NoError(t, syscall.Lstat(filepath.Join(top, rel), &st))
			inside[st.Ino] = true
			paths = append(paths, rel)
		}
	}
	sort.Strings(paths)
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		d, moved := filepath.Join(top, "d"), filepath.Join(top, "d.moved")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if os.Rename(d, moved) == nil && os.Symlink(outside, d) == nil {
				n++
			}
			time.Sleep(100 * time.Microsecond)
			_ = os.Remove(d)
			_ = os.Rename(moved, d)
			time.Sleep(300 * time.Microsecond)
		}
	}()
	base, err := syscall.Open(top, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer syscall.Close(base)
	found, gone := 0, 0
	for round := 0; round < 200; round++ {
		out := make([]Stat, len(paths))
		require.True(t, ringStat(top, base, len(paths), func(i int) string { return paths[i] },
			func(i int, st *syscall.Stat_t, err error) { out[i] = statFrom(paths[i], st, err) }))
		for i, s := range out {
			if s.Err != nil {
				gone++
				continue
			}
			found++
			require.True(t, inside[s.Ino], "round %d: %s answered through the link", round, paths[i])
		}
	}
	close(stop)
	n := <-swapped
	t.Logf("%d swaps; %d answers found, %d gone", n, found, gone)
	require.Positive(t, n)
	require.Positive(t, found)
}
