package tests

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longAgo is an access time older than any file's change: relatime (and
// strictatime) moves it on the next read of the file, noatime never does.
var longAgo = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// markUnread sets a file's access time to longAgo, keeping its mtime.
func markUnread(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(path, longAgo, fi.ModTime()))
}

// wasRead says whether the file was read since markUnread.
func wasRead(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return time.Unix(st.Atim.Sec, st.Atim.Nsec).After(longAgo)
}

// TestCapture_SkippedFileIsNotRead: a file over venom.maxFileBytes, new or
// tracked, is looked at (its size) and never read, by git-venom or by the
// git it runs, at the first capture (git status) and at the next ones (the
// quick scan), while files beside it are read and captured; a FIFO beside
// them, which would block an open for reading, is not opened. A file's
// access time tells whether it was read; a control file that is read
// proves the file system keeps access times.
func TestCapture_SkippedFileIsNotRead(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "1000")
	env.Write("dump.sql", "small at first\n")
	env.Write("a.txt", "a\n")
	env.Commit("base")
	env.Write("dump.sql", strings.Repeat("d", 5000))    // tracked, changed, too big
	env.Write("weights.bin", strings.Repeat("w", 8000)) // new, too big
	require.NoError(t, syscall.Mkfifo(env.Path("pipe"), 0o644))
	skipped := []string{"dump.sql", "weights.bin"}

	for i, step := range []string{"first capture (git status)", "second capture (quick scan)", "third capture"} {
		control := "control.txt"
		env.Write(control, step+"\n")
		env.Write("a.txt", step+"\n")
		for _, p := range append(skipped, control) {
			markUnread(t, env.Path(p))
		}
		var extra []string
		if i > 0 {
			extra = noStatus
		}
		var res TakeResult
		env.VenomIn(env.Dir, extra, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
		require.NotNil(t, res.Checkpoint, step)
		require.True(t, wasRead(t, env.Path(control)), "%s: the capture read the control file, so access times show reads", step)
		for _, p := range skipped {
			assert.False(t, wasRead(t, env.Path(p)), "%s: %s is skipped, and was read", step, p)
		}
		it := env.Item(t, "a1", *res.Checkpoint)
		assert.Equal(t, []SkippedPath{
			{Path: "dump.sql", Bytes: 5000, Reason: "too_big"},
			{Path: "weights.bin", Bytes: 8000, Reason: "too_big"},
		}, it.Repos[0].Skipped, step)
		// The capture holds the rest: what the recipe gives without them.
		assert.Equal(t, env.RecipeTree(append(skipped, "pipe")...), env.CheckpointTree("a1", i+1), step)
		env.Tick()
	}
}

// TestCapture_MemoSkipWorktreeBytesAreTodays: the scan memo is keyed by
// what git status lists, and status never looks at a skip-worktree
// path's file. A capture that takes the memo shortcut still reports that
// file's size as it is now (docs/checkpoints.md#what-a-capture-holds: the
// working file's size, or the index entry's when there is none), not the
// one the memo's capture saw. Other agents of the tree take a checkpoint
// each, so every capture is logged with its skipped list.
func TestCapture_MemoSkipWorktreeBytesAreTodays(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("sparse.txt", "committed\n")
	env.Commit("base")
	env.Git("update-index", "--skip-worktree", "sparse.txt")
	first := "changed here, as a sparse checkout allows\n"
	env.Write("sparse.txt", first)
	env.Write("new.txt", "untracked, listed by status\n")
	// Files written within two seconds of a capture keep it from making
	// or taking a memo.
	time.Sleep(2100 * time.Millisecond)
	skippedOf := func(agent string) []SkippedPath {
		t.Helper()
		env.Take(t, "--agent="+agent)
		return env.Item(t, agent, "k1").Repos[0].Skipped
	}
	require.Equal(t, []SkippedPath{{Path: "sparse.txt", Bytes: int64(len(first)), Reason: "skip_worktree"}}, skippedOf("a1"))

	grown := strings.Repeat("a local change git status does not see\n", 3)
	env.Write("sparse.txt", grown)
	assert.Equal(t, []SkippedPath{{Path: "sparse.txt", Bytes: int64(len(grown)), Reason: "skip_worktree"}}, skippedOf("a2"),
		"the file's size now")

	env.Remove("sparse.txt")
	assert.Equal(t, []SkippedPath{{Path: "sparse.txt", Bytes: int64(len("committed\n")), Reason: "skip_worktree"}}, skippedOf("a3"),
		"the index entry's size, the file being gone")
	// The three checkpoints hold the same tree: the index's version.
	for _, a := range []string{"a1", "a2", "a3"} {
		require.Equal(t, "committed\n", env.Git("cat-file", "-p", "refs/venom/checkpoints/"+a+"/1:sparse.txt")+"\n")
	}
}
