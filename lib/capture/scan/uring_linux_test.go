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
