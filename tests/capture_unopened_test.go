package tests

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// deepFolders makes levels folders of 200-character names under dir,
// each made relative to the one above (mkdirat), as a process can go past
// PATH_MAX where no path from the top can; it writes name in the deepest
// with content, and returns the deepest folder's path from dir.
func deepFolders(t *testing.T, dir string, levels int, name, content string) string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	seg := strings.Repeat("d", 200)
	var parts []string
	for i := 0; i < levels; i++ {
		require.NoError(t, unix.Mkdirat(fd, seg, 0o755))
		next, err := unix.Openat(fd, seg, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		unix.Close(fd)
		fd = next
		parts = append(parts, seg)
	}
	f, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT, 0o644)
	require.NoError(t, err)
	_, err = unix.Write(f, []byte(content))
	require.NoError(t, err)
	unix.Close(f)
	unix.Close(fd)
	return strings.Join(parts, "/")
}

// TestCapture_FolderPastPathMaxIsSkippedLoudly: a file deeper than
// PATH_MAX is one git cannot see, so the capture lists its folder as
// skipped (unreadable, ending in '/') in --json and the log, is no reuse,
// keeps saying so once the untracked cache would trust the folder as
// empty, and stops once it is gone.
func TestCapture_FolderPastPathMaxIsSkippedLoudly(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	first := env.Take(t, "--agent=a1", "--isolation=worktree")
	require.Empty(t, first.Skipped)

	deep := deepFolders(t, env.Dir, 30, "deepfile", "agent work\n")
	env.Write("shallow/new.txt", "beside it\n")
	// git itself sees neither the file nor the folder that holds it.
	status := env.run(env.Dir, nil, "git", "status", "--porcelain", "-uall")
	require.Contains(t, status.Stderr, "could not open directory")
	require.NotContains(t, status.Stdout, "deepfile")

	check := func(step string, res TakeResult) {
		t.Helper()
		require.Len(t, res.Skipped, 1, step)
		s := res.Skipped[0]
		assert.Equal(t, "unreadable", s.Reason, step)
		assert.True(t, strings.HasSuffix(s.Path, "/"), "%s: a folder: %q", step, s.Path)
		assert.True(t, strings.HasPrefix(deep+"/", s.Path), "%s: %q is on the deep file's way", step, s.Path)
		assert.Greater(t, len(s.Path), 3000, "%s: the deepest folder git named", step)
		rec := env.Item(t, "a1", *res.Checkpoint)
		assert.Equal(t, res.Skipped, rec.Repos[0].Skipped, "%s: the log lists it too", step)
		// The checkpoint holds what git add -A gives.
		assert.Equal(t, env.RecipeTree(), env.Git("rev-parse", rec.Repos[0].Commit+"^{tree}"), step)
		assert.Equal(t, "beside it", env.Git("cat-file", "-p", rec.Repos[0].Commit+":shallow/new.txt"), step)
	}
	res := env.Take(t, "--agent=a1")
	require.False(t, res.Reused)
	check("first capture", res)

	// Past the racy window, git's untracked cache would trust the folder
	// as read and empty, and a status on the private index would warn of
	// nothing.
	time.Sleep(2100 * time.Millisecond)
	again := env.Take(t, "--agent=a1")
	assert.True(t, again.Reused, "nothing else changed")
	check("a capture later, nothing changed", again)
	env.Write("a.txt", "edited\n")
	time.Sleep(2100 * time.Millisecond)
	res = env.Take(t, "--agent=a1")
	require.False(t, res.Reused)
	check("a capture later, a.txt changed", res)
	out := env.Venom("checkpoint", "--agent=a1", "--reason=manual").OK(t).Stdout
	assert.Contains(t, out, "Nothing changed")

	require.NoError(t, os.RemoveAll(env.Path(strings.Repeat("d", 200))))
	gone := env.Take(t, "--agent=a1")
	assert.False(t, gone.Reused, "the folder went: the skipped list changed")
	assert.Empty(t, gone.Skipped)
}

// TestCapture_UnreadableFolderIsSkipped: a folder the capturing user may
// not open is listed as skipped, as git status warns of it, and nothing of
// the tree beside it is lost.
func TestCapture_UnreadableFolderIsSkipped(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	nobody := asNobody(t, env)
	env.Write("locked/inside.txt", "the agent's\n")
	env.Write("open.txt", "new\n")
	require.NoError(t, os.Chmod(env.Path("locked"), 0))
	var res TakeResult
	nobody("venom-checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	require.Equal(t, []SkippedPath{{Path: "locked/", Reason: "unreadable"}}, res.Skipped)
	rec := env.lastTaken()
	require.Len(t, rec.Repos[0].Skipped, 1)
	require.Equal(t, "locked/", rec.Repos[0].Skipped[0].Path)
	require.Equal(t, "new", env.Git("cat-file", "-p", rec.Repos[0].Commit+":open.txt"))
}
