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
