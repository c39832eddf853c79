package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSecurity_CaptureFolderSwappedForALinkBeforeTheRead: a capture reads
// the files the scan found changed by their path in the tree. A folder of
// the tree swapped for a link to a folder outside it between the scan and
// the read (a local process racing the capture) must not have a file
// outside the tree read into the checkpoint.
func TestSecurity_CaptureFolderSwappedForALinkBeforeTheRead(t *testing.T) {
	t.Parallel()
	// Read in process: no attribute (a CR alone is stored as it is,
	// 7be46e0). Hashed by git: a CR in a file a text attribute covers
	// (git decides its line endings).
	// Stored by git: a file over store.MemoryFileBytes, which git
	// streams.
	for _, c := range []struct {
		name, point, eol, attrs string
		size                    int
	}{
		{"read in process", "capture-object-write", "\n", "", 0},
		{"hashed by git", "capture-hash-object", "\r\n", "sub/* text=auto\n", 0},
		{"stored by git", "capture-hash-object", "\n", "", 5 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			captureSwapped(t, c.point, c.eol, c.attrs, c.size)
		})
	}
}

func captureSwapped(t *testing.T, point, eol, attrs string, size int) {
	env := NewEnv(t)
	if attrs != "" {
		env.Write(".gitattributes", attrs)
	}
	env.Write("sub/f", "tracked"+eol)
	env.Write("sub/g", "tracked too"+eol)
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Tick()
	env.Write("sub/f", "the agent's edit"+eol+strings.Repeat("x", size))
	env.Write("sub/g", "another edit"+eol)

	outside := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o700))
	secret := "a private file outside the tree" + eol
	require.NoError(t, os.WriteFile(filepath.Join(outside, "f"), []byte(secret), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "g"), []byte(secret+"g"+eol), 0o600))
	// As git would store it at sub/f: the attribute normalises its CRs.
	secretID := env.GitInput(secret, "hash-object", "--stdin", "--path=sub/f")

	p := env.pause(point, []string{"VENOM_TEST_PAUSE_RESUME=1"},
		"checkpoint", "--agent=a1", "--reason=turn_end", "--json")
	require.NoError(t, os.Rename(env.Path("sub"), env.Path("sub.moved")))
	require.NoError(t, os.Symlink(outside, env.Path("sub")))
	resumeEvery(t, p)
	require.NotContains(t, p.errb.String(), "panic:")

	// Whatever the checkpoint holds, the outside file is nowhere in it.
	for _, ref := range strings.Fields(env.Git("for-each-ref", "--format=%(refname)")) {
		ls := env.Git("ls-tree", "-r", ref)
		require.NotContains(t, ls, secretID, "%s holds the file outside the tree: %s", ref, ls)
	}
	out := env.GitRaw("cat-file", "-e", secretID)
	require.NotEqual(t, 0, out.Code, "the outside file's bytes were stored in the repository")
}

// TestSecurity_CaptureNestedRepositorySwappedForALink: a nested
// repository of the tree is captured as its HEAD commit; a folder above
// it swapped for a link to a folder outside the tree between the scan and
// the read must not have the commit of a repository outside the tree
// recorded in the checkpoint.
func TestSecurity_CaptureNestedRepositorySwappedForALink(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	nested := func(dir, msg string) string {
		env.Git("-C", dir, "init", "-q")
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(msg+"\n"), 0o644))
		env.Git("-C", dir, "add", ".")
		env.Git("-C", dir, "commit", "-q", "-m", msg)
		return env.Git("-C", dir, "rev-parse", "HEAD")
	}
	require.NoError(t, os.MkdirAll(env.Path("sub/x"), 0o755))
	nested(env.Path("sub/x"), "inside")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Tick()
	env.Write("sub/x/f.txt", "moved on\n")
	env.Git("-C", env.Path("sub/x"), "commit", "-q", "-am", "moved on")

	outside := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "x"), 0o700))
	secretHead := nested(filepath.Join(outside, "x"), "a private repository outside the tree")

	p := env.pause("capture-object-write", []string{"VENOM_TEST_PAUSE_RESUME=1"},
		"checkpoint", "--agent=a1", "--reason=turn_end", "--json")
	require.NoError(t, os.Rename(env.Path("sub"), env.Path("sub.moved")))
	require.NoError(t, os.Symlink(outside, env.Path("sub")))
	resumeEvery(t, p)
	require.NotContains(t, p.errb.String(), "panic:")
	for _, ref := range strings.Fields(env.Git("for-each-ref", "--format=%(refname)")) {
		ls := env.Git("ls-tree", "-r", ref)
		require.NotContains(t, ls, secretHead, "%s holds the outside repository's HEAD: %s", ref, ls)
	}
}

// resumeEvery lets a paused command go on each time it stops at its point
// (the index way, taken when the tree way gives up, passes it again),
// and returns when it has ended.
func resumeEvery(t *testing.T, p *paused) {
	t.Helper()
	for {
		if err := os.Remove(p.file); err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		select {
		case <-p.done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
