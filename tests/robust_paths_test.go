package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Captures and rollbacks across paths and file types.

func TestRobust_ManyFilesDeepPathsAndOddNames(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// Writing 5,000 new objects is slow on a loaded machine; the time is
	// not what this test checks.
	env.Git("config", "--global", "venom.timeout", "900s")
	for i := 0; i < 5000; i++ {
		env.Write(fmt.Sprintf("many/f%04d.txt", i), fmt.Sprintf("%d\n", i))
	}
	deep := strings.Repeat("d/", 30) + "leaf.txt"
	env.Write(deep, "deep\n")
	odd := []string{"Case.txt", "case.txt", "CASE.txt", "back\\slash", "tab\there", "new\nline", "bad\xff\xfeutf8",
		"-leading-dash", "--force", "-", " space ", "quote\"d", "star*", "ütf8-ok"}
	for _, n := range odd {
		env.Write(n, "odd "+n+"\n")
	}
	env.CaptureLikeRecipe(t, "a1")
	env.Commit("all of it")
	for i := 0; i < 5000; i += 7 {
		env.Write(fmt.Sprintf("many/f%04d.txt", i), "changed\n")
	}
	env.Remove("many/f0001.txt")
	env.Write(deep, "deep changed\n")
	for _, n := range odd {
		env.Write(n, "changed "+n+"\n")
	}
	env.Remove("case.txt")
	commit := env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "changed Case.txt", env.Git("cat-file", "-p", commit+":Case.txt"))
	require.NotEqual(t, 0, env.GitRaw("cat-file", "-e", commit+":case.txt").Code)
	// The log shows a non-UTF-8 path as docs/json.md#conventions says, and diff lists it.
	var diff struct {
		Files []struct {
			Path    string `json:"path"`
			PathB64 string `json:"path_b64"`
		} `json:"files"`
	}
	env.Venom("diff", "--agent=a1", "--from=k1", "--to=k2", "--json").OK(t).JSON(t, &diff)
	found := false
	for _, f := range diff.Files {
		if f.PathB64 != "" {
			found = true
			require.Equal(t, "bad\uFFFD\uFFFDutf8", f.Path)
		}
	}
	require.True(t, found, "the non-UTF-8 path has path_b64")
}

func TestRobust_SymlinksAreCapturedAsLinks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := filepath.Join(env.Root, "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside the repository\n"), 0o644))
	require.NoError(t, os.Symlink(outside, env.Path("out-link")))
	require.NoError(t, os.Symlink("loop-b", env.Path("loop-a")))
	require.NoError(t, os.Symlink("loop-a", env.Path("loop-b")))
	require.NoError(t, os.Symlink("missing-target", env.Path("dangling")))
	require.NoError(t, os.Symlink(env.Root, env.Path("dir-link")))
	commit := env.CaptureLikeRecipe(t, "a1")
	for link, target := range map[string]string{"out-link": outside, "loop-a": "loop-b", "dangling": "missing-target",
		"dir-link": env.Root} {
		ls := env.Git("ls-tree", commit, link)
		require.True(t, strings.HasPrefix(ls, "120000 blob "), "%s: %s", link, ls)
		require.Equal(t, target, env.Git("cat-file", "-p", commit+":"+link))
	}
	require.NotContains(t, env.Git("ls-tree", "-r", "--name-only", commit), "dir-link/", "a link is never followed")
}

// specialFiles makes a FIFO, a socket and a character device in dir.
func specialFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	// /dev/null's numbers, made only where mknod is allowed (root).
	if err := syscall.Mknod(filepath.Join(dir, "null-dev"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no device file: %v", err)
	}
}

func TestRobust_FifosSocketsAndDevicesAreNeverCaptured(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("was-a-file", "a tracked file, replaced by a FIFO below\n")
	env.Commit("tracked")
	env.Remove("was-a-file")
	env.Write("plain.txt", "plain\n")
	// The oracle: docs/checkpoints.md#how-a-capture-runs's recipe for the same state without the special
	// files (git add refuses a FIFO where a tracked file was; git holds
	// none of them, docs/rollback.md#left, so the file counts as deleted).
	want := env.RecipeTree()
	specialFiles(t, env.Dir)
	require.NoError(t, os.MkdirAll(env.Path("sub"), 0o755))
	specialFiles(t, env.Path("sub"))
	require.NoError(t, syscall.Mkfifo(env.Path("was-a-file"), 0o644))
	snap := env.Snapshot()
	done := make(chan struct{})
	go func() {
		defer close(done)
		env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
		env.Venom("diff", "--agent=a1", "--from=k1", "--json").OK(t)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a capture hung on a special file")
	}
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
}

// asNobody runs a venom command as the unprivileged user nobody, so
// permissions apply (the tests run as root). It skips the test where that
// is impossible.
func asNobody(t *testing.T, env *Env) func(args ...string) Result {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is not installed: cannot run as nobody")
	}
	// nobody must reach the binaries, the repository and its config.
	require.NoError(t, os.Chmod(binDir, 0o755))
	require.NoError(t, exec.Command("chown", "-R", "nobody:", env.Root).Run())
	for d := env.Root; d != "/"; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		if fi.Mode().Perm()&0o001 == 0 {
			require.NoError(t, os.Chmod(d, fi.Mode().Perm()|0o011))
		}
	}
	// root's own git calls must accept a repository nobody owns.
	f, err := os.OpenFile(filepath.Join(env.Home, ".gitconfig"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("[safe]\n\tdirectory = *\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return func(args ...string) Result {
		return env.run(env.Dir, nil, setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups",
			"git"}, args...)...)
	}
}

func TestRobust_UnreadableFileIsSkipped(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("secret.txt", "tracked\n")
	env.Write("other.txt", "other\n")
	env.Commit("base")
	nobody := asNobody(t, env)
	env.Write("secret.txt", "changed, and unreadable\n")
	env.Write("untracked-secret.txt", "never readable\n")
	env.Write("other.txt", "changed\n")
	for _, p := range []string{"secret.txt", "untracked-secret.txt"} {
		require.NoError(t, os.Chmod(env.Path(p), 0))
	}
	snap := env.Snapshot()
	done := make(chan Result, 1)
	go func() { done <- nobody("venom-checkpoint", "--agent=a1", "--json") }()
	var r Result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a capture hung on an unreadable file")
	}
	r.OK(t)
	env.AssertUntouched(t, snap)
	rec := env.lastTaken()
	var skipped []string
	for _, s := range rec.Repos[0].Skipped {
		require.Equal(t, "unreadable", s.Reason, s.Path)
		skipped = append(skipped, s.Path)
	}
	require.ElementsMatch(t, []string{"secret.txt", "untracked-secret.txt"}, skipped)
	commit := rec.Repos[0].Commit
	require.Equal(t, "tracked", env.Git("cat-file", "-p", commit+":secret.txt"), "the index's version is kept")
	require.Equal(t, "changed", env.Git("cat-file", "-p", commit+":other.txt"))
	require.Equal(t, env.RecipeTree(skipped...), env.Git("rev-parse", commit+"^{tree}"))
}
