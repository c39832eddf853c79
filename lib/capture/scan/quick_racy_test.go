package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/testhook"
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
		require.NoError(t, stats.Guard(func() { changed, _, err = statTracked(dir, stats, nil, false) }))
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

// FilesDigest reads git's settings files rather than trusting their stat
// data: a same-size edit in the same clock tick as the stat data it
// replaces (two writes a moment apart, where the kernel's coarse file
// times leave them alike) gives another digest; the same content, with
// other times, the same one.
// A file too large to read, or a FIFO (never opened), is digested by its
// stat data while that is past racy, else by a time matching nothing.
func TestFilesDigest_ReadsRatherThanTrustsStat(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	digest := func(files ...string) string {
		h := sha256.New()
		FilesDigest(h, files)
		return hex.EncodeToString(h.Sum(nil))
	}
	alike := false
	for try := 0; try < 100 && !alike; try++ {
		require.NoError(t, os.WriteFile(config, []byte("[core]\n\tbare = 0\n"), 0o644))
		var before, after syscall.Stat_t
		require.NoError(t, syscall.Stat(config, &before))
		first := digest(config)
		require.NoError(t, os.WriteFile(config, []byte("[core]\n\tbare = 1\n"), 0o644))
		require.NoError(t, syscall.Stat(config, &after))
		if before.Mtim != after.Mtim || before.Ctim != after.Ctim {
			continue // a clock tick between the writes
		}
		alike = true
		require.NotEqual(t, first, digest(config), "same stat data, other content")
	}
	if !alike {
		// Kernels with multigrain file times (Linux 6.13) give a file
		// changed after a stat a finer time.
		t.Log("no two writes left the same file times")
	}
	// The digest is the content's: the same for the same bytes, racy or
	// not, whatever the file's times.
	before := digest(config)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(config, later, later))
	require.Equal(t, before, digest(config), "other times, the same content")

	big := filepath.Join(dir, "excludes")
	require.NoError(t, os.WriteFile(big, make([]byte, maxSettingsRead+1), 0o644))
	require.NotEqual(t, digest(big), digest(big), "too large to read, changed a moment ago: no vouching")
	long := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(big, long, long))
	fifo := filepath.Join(dir, "attributes")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// Past the margin from the ctimes just set.
	time.Sleep(time.Until(time.Unix(time.Now().Unix()+2, 10e6)))
	require.Equal(t, digest(big, fifo), digest(big, fifo), "past racy, the stat data vouches")
}

// A settings file is read once a process while its stat data stays past
// racy, and read again, to the same digest as a fresh read, once it
// moves, a same-size edit included.
func TestFilesDigest_ReadOnceWhileTheFileStays(t *testing.T) {
	if !testhook.Enabled {
		t.Skip("needs -tags venomtest (VENOM_TEST_RACY_MS)")
	}
	t.Setenv("VENOM_TEST_RACY_MS", "1")
	config := filepath.Join(t.TempDir(), "config")
	digest := func() string {
		h := sha256.New()
		FilesDigest(h, []string{config})
		return hex.EncodeToString(h.Sum(nil))
	}
	fresh := func(text string) string {
		h := sha256.New()
		fmt.Fprintf(h, "%s:%d:%x\x00", config, len(text), sha256.Sum256([]byte(text)))
		return hex.EncodeToString(h.Sum(nil))
	}
	require.NoError(t, os.WriteFile(config, []byte("[core]\n\tbare = 0\n"), 0o644))
	time.Sleep(5 * time.Millisecond)
	n := digestReads.Load()
	for i := 0; i < 3; i++ {
		require.Equal(t, fresh("[core]\n\tbare = 0\n"), digest())
	}
	require.Equal(t, n+1, digestReads.Load(), "read once")
	require.NoError(t, os.WriteFile(config, []byte("[core]\n\tbare = 1\n"), 0o644))
	time.Sleep(5 * time.Millisecond)
	require.Equal(t, fresh("[core]\n\tbare = 1\n"), digest())
	require.Equal(t, n+2, digestReads.Load())
}
