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

// TestLstat_LongNameAmongOthers: a listed name longer than PATH_MAX (an
// index entry can hold one) is "gone" and the paths around it are
// answered as a plain lstat answers them, without a wait.
func TestLstat_LongNameAmongOthers(t *testing.T) {
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
	out := make([]Stat, len(changes))
	finished := make(chan struct{})
	go func() {
		LstatInto(top, changes, out)
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(20 * time.Second):
		t.Fatal("LstatInto still waiting after 20 s")
	}
	for i, c := range changes {
		var st syscall.Stat_t
		err := syscall.Lstat(filepath.Join(top, c.Path), &st)
		if err != nil {
			require.Error(t, out[i].Err, c.Path[:min(len(c.Path), 40)])
			continue
		}
		require.NoError(t, out[i].Err, c.Path)
		require.Equal(t, st.Ino, out[i].Ino, c.Path)
	}
	require.Error(t, out[100].Err, "the long name is gone")
}

// TestLstat_NeverThroughALinkUnderSwaps: while another goroutine keeps
// swapping a folder of the tree for a link to a folder outside it (the
// same names, other inodes), every answer LstatInto gives for a path in
// that folder is the real folder's file or "gone", never the file the
// link leads to: each folder is opened beneath the top, no link
// followed, and each fstatat is made in that open folder.
func TestLstat_NeverThroughALinkUnderSwaps(t *testing.T) {
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
	changes := make([]Change, len(paths))
	for i, p := range paths {
		changes[i] = Change{Path: p}
	}
	found, gone := 0, 0
	for round := 0; round < 200; round++ {
		out := LstatAll(top, changes)
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
