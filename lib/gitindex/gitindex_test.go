package gitindex

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// Read finds the flagged entries git wrote, in every index version, and
// its Content moves with the recorded files, not with stat data.
func TestRead_IndexesGitWrote(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string { return gittest.Run(t, dir, "", nil, args...) }
	git("init", "-q")
	for _, p := range []string{"a.txt", "dir/b.txt", "skip.txt", "assume.txt"} {
		write(t, dir, p, p+"\n")
	}
	git("add", "-A")
	write(t, dir, "new.txt", "new\n")
	git("add", "--intent-to-add", "new.txt")
	git("update-index", "--skip-worktree", "skip.txt")
	git("update-index", "--assume-unchanged", "assume.txt")
	index := filepath.Join(dir, ".git", "index")

	first, err := Read(index)
	require.NoError(t, err)
	require.Equal(t, 5, first.Count)
	flags := map[string]Entry{}
	for _, e := range first.Flagged {
		flags[e.Path] = e
	}
	require.Len(t, flags, 3)
	require.True(t, flags["skip.txt"].SkipWorktree)
	require.True(t, flags["assume.txt"].AssumeValid)
	require.True(t, flags["new.txt"].IntentToAdd)
	require.Equal(t, git("rev-parse", ":skip.txt"), hexOf(flags["skip.txt"].Oid))

	// A refresh rewrites stat data only: the same Content.
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "a.txt"), future, future))
	before, err := os.ReadFile(index)
	require.NoError(t, err)
	git("status", "--porcelain") // refreshes the index and writes it
	after, err := os.ReadFile(index)
	require.NoError(t, err)
	require.NotEqual(t, before, after, "git status did not rewrite the index")
	again, err := Read(index)
	require.NoError(t, err)
	require.Equal(t, first.Content, again.Content)

	// Version 4 compresses paths: the same entries, the same Content.
	git("update-index", "--index-version", "4")
	v4, err := Read(index)
	require.NoError(t, err)
	require.Equal(t, 4, v4.Version)
	require.Equal(t, first.Content, v4.Content)
	require.Len(t, v4.Flagged, 3)

	// Another blob for one path: another Content.
	write(t, dir, "a.txt", "changed\n")
	git("add", "a.txt")
	changed, err := Read(index)
	require.NoError(t, err)
	require.NotEqual(t, first.Content, changed.Content)
}

func TestRead_MissingAndDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	ix, err := Read(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Zero(t, ix.Count)
	for _, content := range []string{"", "DIRC", "not an index at all, long enough to be mapped"} {
		p := filepath.Join(dir, "bad")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		_, err := Read(p)
		require.Error(t, err, "%q", content)
	}
}

func hexOf(id [20]byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 40)
	for i, b := range id {
		out[2*i], out[2*i+1] = digits[b>>4], digits[b&15]
	}
	return string(out)
}
