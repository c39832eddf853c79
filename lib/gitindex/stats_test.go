package gitindex

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// ReadStats gives each entry the stat data git cached, which is the file's
// own right after git add; Members moves with the paths only.
func TestReadStats_StatDataGitCached(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string { return gittest.Run(t, dir, "", nil, args...) }
	git("init", "-q")
	for _, p := range []string{"a.txt", "dir/b.txt", "dir/sub/c.sh"} {
		write(t, dir, p, p+"\n")
	}
	require.NoError(t, os.Chmod(filepath.Join(dir, "dir/sub/c.sh"), 0o755))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(dir, "link")))
	git("add", "-A")
	index := filepath.Join(dir, ".git", "index")

	for _, version := range []string{"2", "4"} {
		git("update-index", "--index-version", version)
		st, err := ReadStats(index)
		require.NoError(t, err)
		var paths []string
		modes := map[string]uint32{}
		for i := 0; i < st.Len(); i++ {
			p, s := string(st.Path(i)), st.Stat(i)
			require.Equal(t, p+"\x00", string(st.CPath(i)))
			paths = append(paths, p)
			modes[p] = s.Mode
			var fs syscall.Stat_t
			require.NoError(t, syscall.Lstat(filepath.Join(dir, p), &fs))
			require.Equal(t, uint32(fs.Mtim.Sec), s.MtimeSec, p)
			require.Equal(t, uint32(fs.Mtim.Nsec), s.MtimeNsec, p)
			require.Equal(t, uint32(fs.Ctim.Sec), s.CtimeSec, p)
			require.Equal(t, uint32(fs.Ino), s.Ino, p)
			require.Equal(t, uint32(fs.Size), s.Size, p)
		}
		require.False(t, st.Flagged)
		require.Equal(t, []string{"a.txt", "dir/b.txt", "dir/sub/c.sh", "link"}, paths)
		require.Equal(t, 2, st.Find([]byte("dir/sub")))
		require.Equal(t, 4, st.Find([]byte("zzz")))
		require.Equal(t, uint32(0o100755), modes["dir/sub/c.sh"])
		require.Equal(t, uint32(0o120000), modes["link"])
		fi, err := os.Stat(index)
		require.NoError(t, err)
		require.Equal(t, fi.ModTime(), st.Mtime)
		st.Close()
	}

	before, err := ReadStats(index)
	require.NoError(t, err)
	write(t, dir, "a.txt", "new content\n")
	git("add", "a.txt")
	same, err := ReadStats(index)
	require.NoError(t, err)
	require.Equal(t, before.Members, same.Members, "a new blob is not a new member")
	write(t, dir, "d.txt", "d\n")
	git("add", "d.txt")
	more, err := ReadStats(index)
	require.NoError(t, err)
	require.NotEqual(t, before.Members, more.Members)

	git("update-index", "--skip-worktree", "a.txt")
	flagged, err := ReadStats(index)
	require.NoError(t, err)
	require.True(t, flagged.Flagged)
}

// A process that truncates the mapped index in place takes its pages away
// from the mapping: every read of it through Guard is then ErrFault, not a
// crash (SIGBUS), for index v2 and v4 (v4's paths are copied out, its stat
// data is not); WritePatched says so too. A fault outside the mapping, or
// any other panic, is not the file's doing and panics on.
func TestStats_CutShortUnderTheMapIsAnError(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string { return gittest.Run(t, dir, "", nil, args...) }
	git("init", "-q")
	for i := 0; i < 200; i++ { // a few pages of entries
		write(t, dir, fmt.Sprintf("dir%d/file-with-a-longer-name-%d.txt", i%7, i), "x\n")
	}
	git("add", "-A")
	index := filepath.Join(dir, ".git", "index")
	readAll := func(st *Stats) {
		for i := 0; i < st.Len(); i++ {
			_ = st.Stat(i)
			_ = bytes.Count(st.Path(i), []byte("/"))
		}
	}
	for _, version := range []string{"2", "4"} {
		git("update-index", "--index-version", version)
		cut := filepath.Join(dir, "cut-"+version+".index")
		b, err := os.ReadFile(index)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(cut, b, 0o644))

		st, err := ReadStats(cut)
		require.NoError(t, err)
		require.True(t, st.mapped)
		require.NoError(t, st.Guard(func() { readAll(st) }))
		require.NoError(t, os.Truncate(cut, 0))
		require.ErrorIs(t, st.Guard(func() { readAll(st) }), ErrFault, "v%s", version)
		_, err = st.WritePatched(io.Discard, nil, time.Now())
		require.ErrorIs(t, err, ErrFault, "v%s", version)

		// Another mapping's fault inside this one's guard is no fault of
		// this file's.
		whole, err := ReadStats(index)
		require.NoError(t, err)
		require.Panics(t, func() { _ = whole.Guard(func() { readAll(st) }) })
		require.PanicsWithValue(t, "not a fault", func() { _ = whole.Guard(func() { panic("not a fault") }) })
		whole.Close()
		st.Close()
	}
}
