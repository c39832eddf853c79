package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// monitored is a repository with git's watchman hook as core.fsmonitor,
// reaching a private watchman, and a tree of a few folders, whose first
// captures have recorded the folders and started the monitor's chain.
func monitored(t *testing.T) (*Env, *Watchman) {
	t.Helper()
	w := PrivateWatchman(t)
	env := NewEnv(t)
	env.UseWatchman(w)
	for i := 0; i < 40; i++ {
		env.Write(fmt.Sprintf("d%d/f%02d.txt", i%4, i), fmt.Sprintf("file %02d\n", i))
	}
	env.Write("d0/sub/deep.txt", "deep\n")
	env.Write("top.txt", "at the top\n")
	env.Write(".gitignore", "*.log\n")
	// Files older than the index's second: not racy, not looked at again.
	time.Sleep(1100 * time.Millisecond)
	env.Commit("base")
	env.Write("u/untracked.txt", "untracked\n")
	env.Checkpoint("--agent=a1") // git status; the folders recorded
	env.Checkpoint("--agent=a1") // the first query: a token, a full quick scan
	return env, w
}

// fsmCapture takes a checkpoint without git status and returns its tree
// and what the capture's steps counted.
func fsmCapture(t *testing.T, env *Env) (tree, counts string) {
	t.Helper()
	return capture(t, env, noStatus)
}

// capture takes a checkpoint with extra in its environment.
func capture(t *testing.T, env *Env, extra []string) (tree, counts string) {
	t.Helper()
	timings := filepath.Join(env.Root, "timings")
	_ = os.Remove(timings)
	extra = append([]string{"VENOM_TEST_TIMINGS=" + timings}, extra...)
	var res struct {
		Checkpoint string `json:"checkpoint"`
	}
	env.VenomIn(env.Dir, extra, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	b, _ := os.ReadFile(timings)
	return env.refTree("refs/venom/checkpoints/a1/" + res.Checkpoint[1:]), string(b)
}

// narrowedBy is how many paths a capture looked at on the monitor's word,
// -1 when it scanned the whole tree.
func narrowedBy(counts string) int {
	for _, l := range strings.Split(counts, "\n") {
		if n, ok := strings.CutPrefix(l, "fsmonitor-narrowed "); ok {
			var v int
			fmt.Sscan(n, &v)
			return v
		}
	}
	return -1
}

// TestFsmonitor_EditsBetweenCapturesSeen: with watchman, a capture looks
// only at what the monitor names, and still holds the recipe's tree
// after each kind of change.
func TestFsmonitor_EditsBetweenCapturesSeen(t *testing.T) {
	t.Parallel()
	env, _ := monitored(t)
	steps := []struct {
		name string
		do   func()
	}{
		{"nothing", func() {}},
		{"same-size edit", func() { env.Write("d1/f01.txt", "FILE 01\n") }},
		{"untracked same-size edit, mtime kept", func() {
			// Once a capture's listing trusts the file's stat data, and
			// the next one took it on the monitor's word.
			time.Sleep(2100 * time.Millisecond)
			fsmCapture(t, env)
			_, counts := fsmCapture(t, env)
			require.Contains(t, counts, "fsmonitor-vouched 1\n")
			fi, err := os.Stat(env.Path("u/untracked.txt"))
			require.NoError(t, err)
			env.Write("u/untracked.txt", "UNTRACKED\n")
			require.NoError(t, os.Chtimes(env.Path("u/untracked.txt"), fi.ModTime(), fi.ModTime()))
		}},
		{"new files, old and new folders", func() {
			env.Write("d2/new.txt", "new\n")
			env.Write("n1/n2/new.txt", "deep new\n")
			env.Write("d3/x.log", "ignored\n")
		}},
		{"deleted tracked and untracked", func() {
			env.Remove("d3/f03.txt")
			env.Remove("u/untracked.txt")
		}},
		{"folder removed", func() { env.Remove("n1") }},
		{"tracked folder replaced by a file", func() {
			env.Remove("d0/sub")
			env.Write("d0/sub", "now a file\n")
		}},
		{"mode", func() { require.NoError(t, os.Chmod(env.Path("d2/f02.txt"), 0o755)) }},
		{"link", func() { require.NoError(t, os.Symlink("f01.txt", env.Path("d1/link"))) }},
	}
	narrowed := 0
	for _, s := range steps {
		s.do()
		// A folder gone sends the quick scan to git status, as without
		// the monitor.
		tree, counts := capture(t, env, nil)
		require.Equal(t, env.RecipeTree(), tree, "%s: the capture's tree is the recipe's", s.name)
		if n := narrowedBy(counts); n >= 0 {
			narrowed++
			require.Less(t, n, 30, "%s: the monitor's paths alone were looked at", s.name)
		}
	}
	require.GreaterOrEqual(t, narrowed, len(steps)-4, "most captures went by the monitor")
}

// TestFsmonitor_SameSecondAsTheCapture: a same-size edit in the second of
// the capture before, its mtime put back, is seen: the monitor names it,
// whatever its stat data says.
func TestFsmonitor_SameSecondAsTheCapture(t *testing.T) {
	t.Parallel()
	env, _ := monitored(t)
	for i := 0; i < 3; i++ {
		fsmCapture(t, env)
		fi, err := os.Stat(env.Path("d1/f05.txt"))
		require.NoError(t, err)
		env.Write("d1/f05.txt", fmt.Sprintf("FiLe %02d\n", i))
		require.NoError(t, os.Chtimes(env.Path("d1/f05.txt"), fi.ModTime(), fi.ModTime()))
		env.Write("u/same.txt", fmt.Sprintf("same %d\n", i))
		tree, counts := fsmCapture(t, env)
		require.Equal(t, env.RecipeTree(), tree, "round %d", i)
		require.GreaterOrEqual(t, narrowedBy(counts), 0, "round %d went by the monitor", i)
	}
}

// TestFsmonitor_WatchmanRestartFallsBack: watchman killed between two
// captures and started again (by the hook) answers the old token with
// every file there is, deletions missing: the capture scans everything
// and sees the file deleted meanwhile; the next one uses the new chain.
func TestFsmonitor_WatchmanRestartFallsBack(t *testing.T) {
	t.Parallel()
	env, w := monitored(t)
	fsmCapture(t, env)
	_, counts := fsmCapture(t, env)
	require.GreaterOrEqual(t, narrowedBy(counts), 0)
	pid := w.Pid()
	require.NotZero(t, pid)
	w.Kill()
	env.Remove("d2/f06.txt")
	env.Write("d1/f01.txt", "FILE 01\n")
	tree, counts := fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree, "the deletion meanwhile is in the capture")
	require.Equal(t, -1, narrowedBy(counts), "the whole tree was scanned")
	require.NotEqual(t, pid, w.Pid(), "the killed watchman did not answer")

	// Once more with the restarted watchman's state restored from its
	// statefile, watching the tree at once. A capture never runs the
	// repository's hook, which would start it: a person's git status does.
	w.Kill()
	w.Start(t)
	env.Remove("d3/f07.txt")
	env.Remove("README.md") // at the top: no folder of it is named
	tree, counts = fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, -1, narrowedBy(counts))

	env.Write("d0/f00.txt", "FILE 00\n")
	tree, counts = fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.GreaterOrEqual(t, narrowedBy(counts), 0, "the new chain holds")

	// Restarted before the capture asks (its watch restored from its
	// statefile): the capture's own query of watchman's socket hears a
	// fresh instance.
	w.Kill()
	env.Remove("top.txt")
	env.Write("d2/f02.txt", "FILE 02\n")
	w.Start(t)
	tree, counts = fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, -1, narrowedBy(counts))
	env.Write("d0/f04.txt", "FILE 04\n")
	tree, counts = fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.GreaterOrEqual(t, narrowedBy(counts), 0)
}

// TestFsmonitor_TokenLostOrStale: without the kept token, or with a
// hook that fails, the capture scans everything, and is right.
func TestFsmonitor_TokenLostOrStale(t *testing.T) {
	t.Parallel()
	env, _ := monitored(t)
	fsmCapture(t, env)
	kept, err := filepath.Glob(filepath.Join(env.StateDir(), "index", "*.fsmonitor"))
	require.NoError(t, err)
	require.Len(t, kept, 1)
	require.NoError(t, os.Remove(kept[0]))
	env.Remove("d1/f09.txt")
	tree, counts := fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, -1, narrowedBy(counts), "no token: the whole tree")

	// A hook that fails: no answer, the whole tree (a config changed:
	// git status too).
	hook := env.Git("config", "core.fsmonitor")
	env.Git("config", "core.fsmonitor", "false; exit 1; ")
	env.Remove("d2/f10.txt")
	tree, _ = capture(t, env, nil)
	require.Equal(t, env.RecipeTree(), tree)
	env.Git("config", "core.fsmonitor", hook)
	env.Checkpoint("--agent=a1") // the config again: git status

	// The chain that broke starts again: a token, then narrowed scans.
	env.Write("d0/f00.txt", "FILE 00\n")
	tree, counts = fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, -1, narrowedBy(counts))
	env.Write("d0/f04.txt", "FILE 04\n")
	time.Sleep(10 * time.Millisecond)
	tree, counts = fsmCapture(t, env)
	require.Equal(t, env.RecipeTree(), tree)
	require.GreaterOrEqual(t, narrowedBy(counts), 0)
}
