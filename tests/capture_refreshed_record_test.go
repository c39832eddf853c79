package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCapture_RefreshedRecordSequenceAsGitAddAll: after a capture that
// gave way to git status for too many changed files (scan.Quick.Refresh
// brought the scan record's moved folders up to date), the captures that
// follow still hold git add -A's tree: new untracked files in refreshed
// folders and in new folders, a folder deleted, ignore rules changed in
// the same turn and after it.
func TestCapture_RefreshedRecordSequenceAsGitAddAll(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	const n = 300 // past the quick scan's bound on files it must hash
	for i := 0; i < n; i++ {
		env.Write(fmt.Sprintf("d%d/f%03d.txt", i%7, i), fmt.Sprintf("file %d\n", i))
	}
	env.Write(".gitignore", "*.log\n")
	env.Write("d5/sub/x.txt", "x\n")
	env.Write("d6/keep.tmp", "untracked\n")
	env.Commit("base")
	env.Write("d4/untracked.txt", "u\n")
	env.Write("d4/deep/u.txt", "u\n")
	// The files are seconds older than the indexes written next: none is
	// racy by git's whole-second rule (docs/checkpoints.md#racy-stat-data),
	// which on a slow machine made hundreds of entries unsure and the
	// quick scan rightly give way to git status.
	older := time.Now().Add(-10 * time.Second)
	require.NoError(t, filepath.Walk(env.Dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Name() == ".git" {
			return filepath.SkipDir
		}
		if fi.Mode().IsRegular() {
			return os.Chtimes(p, older, older)
		}
		return nil
	}))
	env.Checkpoint("--agent=a1") // records the folders
	time.Sleep(2100 * time.Millisecond)
	require.Equal(t, env.RecipeTree(), quickCapture(t, env))

	timings := filepath.Join(env.Root, "timings")
	capture := func(step string) string {
		t.Helper()
		// Past the folders' racy window (2 s).
		time.Sleep(2100 * time.Millisecond)
		var res struct {
			Checkpoint string `json:"checkpoint"`
		}
		_ = os.Remove(timings)
		env.VenomIn(env.Dir, []string{"VENOM_TEST_TIMINGS=" + timings}, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
		require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/a1/"+res.Checkpoint[1:]), step)
		b, err := os.ReadFile(timings)
		require.NoError(t, err)
		return string(b)
	}
	// The turn that gives way to git status: every file touched, and
	// beside it new files, an ignored one, a deleted folder, a new rule.
	earlier := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		require.NoError(t, os.Chtimes(env.Path(fmt.Sprintf("d%d/f%03d.txt", i%7, i)), earlier, earlier))
	}
	env.Write("d1/new.txt", "new in d1\n")
	env.Write("d2/a.log", "ignored\n")
	env.Write("d3/sub/new.txt", "new in a new folder of d3\n")
	require.Regexp(t, `quick-refreshed [1-9]`, capture("many changes"), "the record refreshed")
	// Then the refreshed record is used.
	env.Remove("d5/sub")
	env.Remove("d4/deep")
	env.Write(".gitignore", "*.log\n*.tmp\n")
	env.Write("d1/n2.tmp", "ignored now\n")
	env.Write("d1/n3.txt", "n3\n")
	env.Write("d3/sub/more/n.txt", "n\n")
	env.Write("d5/sub/back.txt", "back\n")
	capture("after refresh")
	env.Write(".gitignore", "*.log\n")
	capture("rule dropped")
	env.Write("d2/.gitignore", "!a.log\n")
	env.Remove("d3/sub")
	capture("rule in a folder")
	env.Remove("d6/keep.tmp")
	env.Write("d6/keep2.txt", "k\n")
	capture("untracked replaced")
}
