package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRefs_SyncedUnderCoreFsync: a checkpoint's ref is synced to disk
// where git syncs a ref it writes: under core.fsync=reference, committed
// or all (or a prefix: git takes "ref" and "commit"), and not under
// git's default; its lock before its rename, and its reflog
// (core.logAllRefUpdates=always) as git syncs its own. git update-ref
// under the same config is the oracle, both seen through strace.
func TestRefs_SyncedUnderCoreFsync(t *testing.T) {
	t.Parallel()
	needStrace(t)
	for _, value := range []string{"", "reference", "committed", "all", "none,reference", "objects",
		"ref", "objects, commit", "-,reference"} {
		t.Run("core.fsync="+value, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			if value != "" {
				env.Git("config", "core.fsync", value)
			}
			env.Git("config", "core.logAllRefUpdates", "always")
			synced := func(ref string, args ...string) refSyncs {
				t.Helper()
				out := filepath.Join(env.Root, "strace.out")
				r := env.run(env.Dir, nil, "/usr/bin/strace", append([]string{"-f", "-y", "-o", out,
					"-e", "trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat"}, args...)...)
				require.Equal(t, 0, r.Code, r.Stderr)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				return refSyncsIn(b, ref)
			}
			want := synced("refs/heads/oracle", "git", "update-ref", "refs/heads/oracle", "HEAD")
			require.Equal(t, value != "" && value != "objects" && value != "-,reference", want.Ref, "git's own choice")
			require.Equal(t, want.Ref, want.BeforeRename, "git syncs the lock before its rename")
			got := synced("refs/venom/checkpoints/a1/1", "git", "venom-checkpoint", "--agent=a1", "--json")
			require.Equal(t, want.Ref, got.Ref, "the checkpoint's ref is synced as git syncs its own")
			require.Equal(t, want.BeforeRename, got.BeforeRename, "synced before its rename, as git syncs its own")
			require.Equal(t, want.Reflog, got.Reflog, "the checkpoint's reflog is synced as git syncs its own")
			require.NotEmpty(t, env.Git("reflog", "show", "refs/venom/checkpoints/a1/1"))
			require.NotEmpty(t, env.Git("rev-parse", "--verify", "refs/venom/checkpoints/a1/1"))
			_, err := os.Stat(filepath.Join(env.Dir, ".git", "packed-refs"))
			require.True(t, os.IsNotExist(err), "made loose, in process")
		})
	}
}

// syncedIn reports whether an strace -f -y trace shows ref (or its lock)
// synced. Another thread's call or a signal (Go's SIGURG) may split the
// line: "fsync(11</r/.git/refs/x> <unfinished ...>".
func syncedIn(trace []byte, ref string) bool { return refSyncsIn(trace, ref).Ref }

// refSyncs is what a trace shows of a ref's sync: the ref (or its lock)
// synced, synced before the lock's rename into place (libgit2 links it,
// then unlinks the lock), its reflog synced.
type refSyncs struct{ Ref, BeforeRename, Reflog bool }

// refSyncsIn reads refSyncs from an strace -f -y trace of fsync, fdatasync
// and the rename and link calls; a call split around another thread's
// event is placed where it starts, as one thread's calls run in order.
func refSyncsIn(trace []byte, ref string) refSyncs {
	q := regexp.QuoteMeta(ref)
	sync := regexp.MustCompile(`(fsync|fdatasync)\(\d+<[^>]*/\.git/` + q + `(\.lock)?>[) ]`).FindIndex(trace)
	rename := regexp.MustCompile(`(rename|renameat|renameat2|link|linkat)\((\d+<[^>]*>, )?"[^"]*/` + q +
		`\.lock", (\d+<[^>]*>, )?"[^"]*/` + q + `"`).FindIndex(trace)
	return refSyncs{
		Ref:          sync != nil,
		BeforeRename: sync != nil && rename != nil && sync[0] < rename[0],
		Reflog:       regexp.MustCompile(`(fsync|fdatasync)\(\d+<[^>]*/\.git/logs/` + q + `>[) ]`).Match(trace),
	}
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

// TestRefs_RefSyncsInReadsTheOrder: the trace reader tells a lock synced
// before its rename (git) from a ref synced after libgit2 linked it into
// place, and a ref's reflog from the ref, split lines included.
func TestRefs_RefSyncsInReadsTheOrder(t *testing.T) {
	t.Parallel()
	const ref = "refs/venom/checkpoints/a1/1"
	for _, c := range []struct {
		trace string
		want  refSyncs
	}{
		{"7  fsync(3</r/.git/refs/venom/checkpoints/a1/1.lock>) = 0\n" +
			"7  rename(\"/r/.git/refs/venom/checkpoints/a1/1.lock\", \"/r/.git/refs/venom/checkpoints/a1/1\") = 0\n",
			refSyncs{Ref: true, BeforeRename: true}},
		{"7  fsync(11</r/.git/refs/venom/checkpoints/a1/1.lock> <unfinished ...>\n8  --- SIGURG ---\n7  <... fsync resumed>) = 0\n" +
			"7  link(\"/r/.git/refs/venom/checkpoints/a1/1.lock\", \"/r/.git/refs/venom/checkpoints/a1/1\" <unfinished ...>\n" +
			"8  fsync(9</r/.git/venom/log.jsonl>) = 0\n7  <... link resumed>) = 0\n",
			refSyncs{Ref: true, BeforeRename: true}},
		{"7  link(\"/r/.git/refs/venom/checkpoints/a1/1.lock\", \"/r/.git/refs/venom/checkpoints/a1/1\") = 0\n" +
			"7  fsync(11</r/.git/refs/venom/checkpoints/a1/1>) = 0\n",
			refSyncs{Ref: true}},
		{"7  rename(\"/r/.git/refs/venom/checkpoints/a1/1.lock\", \"/r/.git/refs/venom/checkpoints/a1/1\") = 0\n" +
			"7  fsync(12</r/.git/logs/refs/venom/checkpoints/a1/1>) = 0\n",
			refSyncs{Reflog: true}},
	} {
		require.Equal(t, c.want, refSyncsIn([]byte(c.trace), ref), c.trace)
	}
}

// TestObjects_PackSyncedUnderCoreFsync: a capture's pack is synced before
// its rename where git syncs a pack it writes: under git's default, which
// holds the pack component, and under pack or objects, not under none or
// -pack. git repack under the same config is the oracle, seen through
// strace: a pack the log names must outlive a power loss as git's does.
func TestObjects_PackSyncedUnderCoreFsync(t *testing.T) {
	t.Parallel()
	needStrace(t)
	packSynced := regexp.MustCompile(`(fsync|fdatasync)\(\d+<[^>]*/objects/pack/tmp_pack_[^>/]*>[) ]`)
	for _, value := range []string{"", "none", "-pack", "none,pack", "objects"} {
		t.Run("core.fsync="+value, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			if value != "" {
				env.Git("config", "core.fsync", value)
			}
			synced := func(args ...string) bool {
				t.Helper()
				out := filepath.Join(env.Root, "strace.out")
				r := env.run(env.Dir, nil, "/usr/bin/strace", append([]string{"-f", "-y", "-o", out,
					"-e", "trace=fsync,fdatasync"}, args...)...)
				require.Equal(t, 0, r.Code, r.Stderr)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				return packSynced.Match(b)
			}
			want := synced("git", "repack", "-a", "-d", "-q")
			require.Equal(t, value != "none" && value != "-pack", want, "git's own choice")
			env.Write("a.txt", "a change the capture packs\n")
			got := synced("git", "venom-checkpoint", "--agent=a1", "--json")
			require.Equal(t, want, got, "the capture's pack is synced as git syncs its own")
		})
	}
}

// needStrace skips a test that reads strace's trace where strace is
// missing, and fails it under CI, where tests/run installs it.
func needStrace(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/strace"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /usr/bin/strace: tests/run installs it")
		}
		t.Skip("no strace")
	}
}
