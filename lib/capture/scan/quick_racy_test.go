package scan

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/gittest"
)

// The quick scan's check of tracked files takes an entry as racy by git's
// rule as installed (lib/racy): a file whose mtime falls in the index's
// second is listed for its bytes to decide, even when the index was
// written after it to the nanosecond (git 2.39 without USE_NSEC reads
// that file too); one of an earlier second with the same stat data is
// not. A same-size edit in that second, mtime set back as the clock's
// tick would leave it, is then seen.
func TestStatTracked_RacyBySeconds(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	sec := time.Now().Unix() - 100
	racyTime, oldTime := time.Unix(sec, 200_936_193), time.Unix(sec-1, 999_999_999)
	for name, when := range map[string]time.Time{"racy.txt": racyTime, "old.txt": oldTime} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644))
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), when, when))
	}
	gittest.Run(t, dir, "", nil, "-c", "core.trustCtime=false", "add", "-A")
	index := filepath.Join(dir, ".git", "index")
	require.NoError(t, os.Chtimes(index, time.Unix(sec, 916_936_193), time.Unix(sec, 916_936_193)))

	list := func() []string {
		t.Helper()
		stats, err := gitindex.ReadStats(index)
		require.NoError(t, err)
		defer stats.Close()
		var changed []string
		require.NoError(t, stats.Guard(func() { changed, _, err = statTracked(dir, stats) }))
		require.NoError(t, err)
		return changed
	}
	require.Equal(t, []string{"racy.txt"}, list())

	// The edit: same size, in place, its mtime the one the index holds.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "racy.txt"), []byte("RACY.txt\n"), 0o644))
	require.NoError(t, os.Chtimes(filepath.Join(dir, "racy.txt"), racyTime, racyTime))
	require.Equal(t, []string{"racy.txt"}, list())
	require.Equal(t, "racy.txt", gittest.Run(t, dir, "", nil, "-c", "core.trustCtime=false", "diff", "--name-only"),
		"git reads it too")
}
