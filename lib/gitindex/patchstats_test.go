package gitindex

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// WritePatched from a mapped index writes, byte for byte, what Patch
// returns for the same updates read from the file, for each index
// version, with the extensions Patch drops (a cache tree, the untracked
// cache, the end-of-entries and offset-table extensions) present, and
// every entry racy, none, or those written with the index.
func TestWritePatched_AsPatch(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) string { return gittest.Run(t, dir, "", nil, args...) }
			git("init", "-q")
			var paths []string
			for i := 0; i < 40; i++ {
				p := fmt.Sprintf("d%d/sub/file-%02d.txt", i%5, i)
				paths = append(paths, p)
				write(t, dir, p, p+"\n")
			}
			git("add", "-A")
			git("-c", "core.untrackedCache=true", "update-index", "--index-version", version, "--untracked-cache")
			git("write-tree")
			_ = git("-c", "core.untrackedCache=true", "status", "--porcelain", "-uall")
			git("-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "-c", "index.threads=2",
				"update-index", "--force-write-index")
			index := filepath.Join(dir, ".git", "index")
			data, err := os.ReadFile(index)
			require.NoError(t, err)
			fi, err := os.Stat(index)
			require.NoError(t, err)
			st, err := ReadStats(index)
			require.NoError(t, err)
			defer st.Close()
			require.Contains(t, st.Extensions, "TREE")
			require.Contains(t, st.Extensions, "UNTR")

			byPath := map[string]Update{}
			byNumber := map[int]Update{}
			for k, p := range []string{paths[0], paths[7], paths[39]} {
				u := Update{Stat: Stat{CtimeSec: 1, CtimeNsec: 2, MtimeSec: 3, MtimeNsec: uint32(4 + k), Dev: 5, Ino: 6,
					Mode: 0o100755, UID: 7, GID: 8, Size: 9}}
				u.Oid[0], u.Oid[19] = byte(k+1), 0xee
				byPath[p] = u
				i := st.Find([]byte(p))
				require.Equal(t, p, string(st.Path(i)))
				byNumber[i] = u
			}
			for _, mtime := range []time.Time{fi.ModTime(), time.Unix(0, 0), time.Now().Add(time.Hour)} {
				want, n, err := Patch(data, byPath, mtime)
				require.NoError(t, err)
				var got bytes.Buffer
				m, err := st.WritePatched(&got, byNumber, mtime)
				require.NoError(t, err)
				require.Equal(t, n, m)
				require.Equal(t, 3, m)
				require.True(t, bytes.Equal(want, got.Bytes()), "WritePatched differs from Patch at %v", mtime)
			}
		})
	}
}

// WritePatched smudges (size 0) each entry racy against the index read by
// git's rule as the installed git applies it (lib/racy): an mtime in the
// index's second, even one before the index to the nanosecond, which a
// rule comparing nanoseconds lets through (git 2.39 without USE_NSEC
// then trusts the entry once the index is written in a later second).
// An entry of an earlier second keeps its size; git reads the
// smudged one and finds it clean.
func TestWritePatched_SmudgesRacyBySeconds(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string { return gittest.Run(t, dir, "", nil, args...) }
	git("init", "-q")
	write(t, dir, "racy.txt", "racy\n")
	write(t, dir, "old.txt", "old\n")
	sec := time.Now().Unix() - 100
	require.NoError(t, os.Chtimes(filepath.Join(dir, "racy.txt"), time.Unix(sec, 200_936_193), time.Unix(sec, 200_936_193)))
	require.NoError(t, os.Chtimes(filepath.Join(dir, "old.txt"), time.Unix(sec-1, 999_999_999), time.Unix(sec-1, 999_999_999)))
	git("add", "-A")
	index := filepath.Join(dir, ".git", "index")
	// The index written after racy.txt, in its second.
	require.NoError(t, os.Chtimes(index, time.Unix(sec, 916_936_193), time.Unix(sec, 916_936_193)))

	st, err := ReadStats(index)
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = st.WritePatched(&out, nil, st.Mtime)
	st.Close()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(index, out.Bytes(), 0o644))
	require.Contains(t, git("ls-files", "--debug", "racy.txt"), "size: 0\t", "racy in seconds: smudged")
	require.Contains(t, git("ls-files", "--debug", "old.txt"), "size: 4\t", "an earlier second: kept")
	require.Equal(t, "racy.txt", git("diff-files", "--name-only"), "git reads the smudged entry only")
	require.Equal(t, "", git("diff", "--name-only"), "and finds it clean")
}
