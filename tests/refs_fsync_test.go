package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRefs_SyncedUnderCoreFsync: a checkpoint's ref made in process
// (libgit2) is synced to disk where git syncs a ref it writes: under
// core.fsync=reference, committed or all, and not under git's default.
// git update-ref under the same config is the oracle, both seen through
// strace.
func TestRefs_SyncedUnderCoreFsync(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/strace"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /usr/bin/strace: tests/run installs it")
		}
		t.Skip("no strace")
	}
	for _, value := range []string{"", "reference", "committed", "all", "none,reference", "objects"} {
		t.Run("core.fsync="+value, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			if value != "" {
				env.Git("config", "core.fsync", value)
			}
			synced := func(ref string, args ...string) bool {
				t.Helper()
				out := filepath.Join(env.Root, "strace.out")
				r := env.run(env.Dir, nil, "/usr/bin/strace", append([]string{"-f", "-y", "-o", out,
					"-e", "trace=fsync,fdatasync"}, args...)...)
				require.Equal(t, 0, r.Code, r.Stderr)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				return syncedIn(b, ref)
			}
			want := synced("refs/heads/oracle", "git", "update-ref", "refs/heads/oracle", "HEAD")
			require.Equal(t, value != "" && value != "objects", want, "git's own choice")
			got := synced("refs/venom/checkpoints/a1/1", "git", "venom-checkpoint", "--agent=a1", "--json")
			require.Equal(t, want, got, "the checkpoint's ref is synced as git syncs its own")
			require.NotEmpty(t, env.Git("rev-parse", "--verify", "refs/venom/checkpoints/a1/1"))
			_, err := os.Stat(filepath.Join(env.Dir, ".git", "packed-refs"))
			require.True(t, os.IsNotExist(err), "made loose, in process")
		})
	}
}

// syncedIn reports whether an strace -f -y trace shows ref (or its lock)
// synced. Another thread's call or a signal (Go's SIGURG) may split the
// line: "fsync(11</r/.git/refs/x> <unfinished ...>".
func syncedIn(trace []byte, ref string) bool {
	return regexp.MustCompile(`(fsync|fdatasync)\(\d+<[^>]*/` + regexp.QuoteMeta(ref) + `(\.lock)?>[) ]`).Match(trace)
}

// TestRefs_SyncedInReadsSplitLines: the trace reader takes a call strace
// split around another thread's event, which a loaded machine shows.
func TestRefs_SyncedInReadsSplitLines(t *testing.T) {
	t.Parallel()
	const ref = "refs/venom/checkpoints/a1/1"
	for _, line := range []string{
		"5485  fsync(11</r/.git/refs/venom/checkpoints/a1/1>) = 0\n",
		"5485  fsync(11</r/.git/refs/venom/checkpoints/a1/1> <unfinished ...>\n5487  --- SIGURG ---\n5485  <... fsync resumed>) = 0\n",
		"5485  fdatasync(3</r/.git/refs/venom/checkpoints/a1/1.lock>) = 0\n",
	} {
		require.True(t, syncedIn([]byte(line), ref), line)
	}
	for _, line := range []string{
		"5485  fsync(11</r/.git/refs/venom/checkpoints/a1/10>) = 0\n",
		"5485  openat(AT_FDCWD, \"/r/.git/refs/venom/checkpoints/a1/1\") = 11\n",
	} {
		require.False(t, syncedIn([]byte(line), ref), line)
	}
}
