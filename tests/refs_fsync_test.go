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
				return regexp.MustCompile(`(fsync|fdatasync)\(\d+<[^>]*/` + regexp.QuoteMeta(ref) + `(\.lock)?>\)`).Match(b)
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
