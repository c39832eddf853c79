package gitindex

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

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
		for _, e := range st.Entries {
			paths = append(paths, e.Path)
			var fs syscall.Stat_t
			require.NoError(t, syscall.Lstat(filepath.Join(dir, e.Path), &fs))
			require.Equal(t, uint32(fs.Mtim.Sec), e.Stat.MtimeSec, e.Path)
			require.Equal(t, uint32(fs.Mtim.Nsec), e.Stat.MtimeNsec, e.Path)
			require.Equal(t, uint32(fs.Ctim.Sec), e.Stat.CtimeSec, e.Path)
			require.Equal(t, uint32(fs.Ino), e.Stat.Ino, e.Path)
			require.Equal(t, uint32(fs.Size), e.Stat.Size, e.Path)
			require.False(t, e.Flagged, e.Path)
		}
		require.Equal(t, []string{"a.txt", "dir/b.txt", "dir/sub/c.sh", "link"}, paths)
		modes := map[string]uint32{}
		for _, e := range st.Entries {
			modes[e.Path] = e.Stat.Mode
		}
		require.Equal(t, uint32(0o100755), modes["dir/sub/c.sh"])
		require.Equal(t, uint32(0o120000), modes["link"])
		fi, err := os.Stat(index)
		require.NoError(t, err)
		require.Equal(t, fi.ModTime(), st.Mtime)
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
	require.True(t, flagged.Entries[0].Flagged)
}
