package gitindex

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// Patch, for the tests, returns a copy of the index bytes data with each plain entry that
// updates names given its new id, mode and stat data (rewritten in place),
// and how many changed; other entries and missing paths are left alone.
// An entry racy against mtime and not updated is smudged, as git does;
// extensions that would go stale (UNTR, TREE, EOIE, IEOT, FSMN) are
// dropped and the checksum remade. A split index is ErrSplit.
func Patch(data []byte, updates map[string]Update, mtime time.Time) ([]byte, int, error) {
	if len(data) < 12+20 {
		return nil, 0, fmt.Errorf("not a git index")
	}
	st, err := parseStats(data)
	if err != nil {
		return nil, 0, err
	}
	byNumber := make(map[int]Update, len(updates))
	for i := range st.ents {
		if u, ok := updates[string(st.Path(i))]; ok {
			byNumber[i] = u
		}
	}
	var out bytes.Buffer
	out.Grow(len(data))
	n, err := st.WritePatched(&out, byNumber, mtime)
	if err != nil {
		return nil, 0, err
	}
	return out.Bytes(), n, nil
}

// Patch gives an entry the object id and stat data of a file just written,
// as git checkout would record them: git then reads the index (checksum
// and all), finds the file clean by its stat data alone, and builds the
// right tree without the cache tree that went. Entries racily clean
// against the old index's time are smudged, so git reads them again.
func TestPatch_EntriesAsGitRecordsThem(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			dir := t.TempDir()
			git := func(env []string, args ...string) string { return gittest.Run(t, dir, "", env, args...) }
			git(nil, "init", "-q")
			for _, p := range []string{"a.txt", "dir/b.txt", "dir/c.txt", "z.txt"} {
				write(t, dir, p, p+"\n")
			}
			git(nil, "add", "-A")
			git(nil, "-c", "core.untrackedCache=true", "update-index", "--index-version", version, "--untracked-cache")
			git(nil, "write-tree") // a cache tree
			if version == "3" {
				git(nil, "update-index", "--skip-worktree", "z.txt")
			}
			index := filepath.Join(dir, ".git", "index")
			_ = git(nil, "-c", "core.untrackedCache=true", "status", "--porcelain", "-uall")

			// b.txt gets new content, written as checkout would.
			time.Sleep(10 * time.Millisecond)
			write(t, dir, "dir/b.txt", "new content\n")
			oid := strings.TrimSpace(git(nil, "hash-object", "-w", "dir/b.txt"))
			var st syscall.Stat_t
			require.NoError(t, syscall.Lstat(filepath.Join(dir, "dir/b.txt"), &st))
			u := Update{Stat: Stat{CtimeSec: uint32(st.Ctim.Sec), CtimeNsec: uint32(st.Ctim.Nsec),
				MtimeSec: uint32(st.Mtim.Sec), MtimeNsec: uint32(st.Mtim.Nsec), Dev: uint32(st.Dev),
				Ino: uint32(st.Ino), Mode: 0o100644, UID: st.Uid, GID: st.Gid, Size: uint32(st.Size)}}
			raw, _ := hex.DecodeString(oid)
			copy(u.Oid[:], raw)
			updates := map[string]Update{"dir/b.txt": u, "absent.txt": u}
			if version == "3" {
				updates["z.txt"] = u // skip-worktree: left alone
			}
			data, err := os.ReadFile(index)
			require.NoError(t, err)
			fi, err := os.Stat(index)
			require.NoError(t, err)
			patched, n, err := Patch(data, updates, fi.ModTime())
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.NoError(t, os.WriteFile(index, patched, 0o644))

			ix, err := Read(index)
			require.NoError(t, err)
			require.Equal(t, 4, ix.Count)
			stats, err := ReadStats(index)
			require.NoError(t, err)
			require.NotContains(t, stats.Extensions, "TREE")
			require.NotContains(t, stats.Extensions, "UNTR")
			stats.Close()
			require.Contains(t, git(nil, "ls-files", "-s", "dir/b.txt"), oid)
			// diff-files trusts stat data: nothing to read for b.txt. The
			// others, written in the index's second, were racy against it
			// (lib/racy): smudged, they are listed until git reads them.
			require.NotContains(t, strings.Fields(git(nil, "diff-files", "--name-only")), "dir/b.txt")
			require.Equal(t, "", strings.TrimSpace(git(nil, "diff", "--name-only")))
			// Without the cache tree, write-tree gives the tree of a fresh index.
			got := strings.TrimSpace(git(nil, "write-tree"))
			fresh := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "fresh")}
			git(fresh, "add", "-A")
			want := strings.TrimSpace(git(fresh, "write-tree"))
			if version != "3" {
				require.Equal(t, want, got)
			}

			// Every entry is racy against a time after its file's: all but
			// the updated one are smudged (size 0), and git still finds the
			// tree clean once it has read them.
			data, err = os.ReadFile(index)
			require.NoError(t, err)
			patched, _, err = Patch(data, map[string]Update{"dir/b.txt": u}, time.Unix(0, 0))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(index, patched, 0o644))
			stats, err = ReadStats(index)
			require.NoError(t, err)
			for i := 0; i < stats.Len(); i++ {
				if p := string(stats.Path(i)); p == "dir/b.txt" {
					require.Equal(t, uint32(st.Size), stats.Stat(i).Size, p)
				} else {
					require.Equal(t, uint32(0), stats.Stat(i).Size, p)
				}
			}
			stats.Close()
			require.Equal(t, "", strings.TrimSpace(git(nil, "diff", "--name-only")))
			require.Equal(t, "", strings.TrimSpace(git(nil, "diff-files", "--name-only")), "git refreshed them")
		})
	}
}
