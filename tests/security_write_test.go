package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSecurity_RollbackHugeBlobStreamed: a checkpoint may hold a blob of
// any size (zeros compress to little). The rollback's writes and its note
// of them (capture.NoteWritten) stream it, as git checkout-index does,
// never read it whole: its own peak memory (VmHWM) stays far below the
// blob's size. core.bigFileThreshold keeps git's processes streaming too.
func TestSecurity_RollbackHugeBlobStreamed(t *testing.T) {
	t.Parallel()
	const size = 64 << 20
	for _, tc := range []struct {
		name, attributes string
	}{
		// Written in process: no attribute could convert it.
		{"in process", ""},
		// Written by checkout-index (text decides the way out), then noted
		// (text cannot change a file without CR on the way in).
		{"by git then noted", "big -text\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Git("config", "core.bigFileThreshold", "1m")
			if tc.attributes != "" {
				info := filepath.Join(env.Dir, ".git", "info")
				require.NoError(t, os.MkdirAll(info, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(info, "attributes"), []byte(tc.attributes), 0o644))
			}
			require.NoError(t, os.WriteFile(env.Path("big"), make([]byte, size), 0o644))
			env.Git("add", "big")
			env.Commit("big")
			env.Turn("a1", func() { env.Remove("big") }) // k1 holds big, k2 not

			args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--json"}
			plan := env.DryRun(args[:3]...).Plan
			p := env.pause("rollback-before-ended", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback",
				append(args, "--plan="+plan)...)
			hwm := peakMemory(t, p.file)
			require.NoError(t, os.Remove(p.file))
			select {
			case <-p.done:
			case <-time.After(2 * time.Minute):
				t.Fatal("the rollback did not end")
			}
			require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
			fi, err := os.Stat(env.Path("big"))
			require.NoError(t, err)
			require.EqualValues(t, size, fi.Size())
			require.Empty(t, env.Git("status", "--porcelain", "--", "big"))
			require.Less(t, hwm, int64(size/2),
				"the rollback read the %d MiB blob whole: its peak memory was %d MiB", size>>20, hwm>>20)
		})
	}
}

// peakMemory reads the peak resident memory (VmHWM) of the process whose
// pid a testhook pause wrote to file.
func peakMemory(t *testing.T, file string) int64 {
	t.Helper()
	var pid int
	for i := 0; i < 500; i++ {
		b, err := os.ReadFile(file)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			pid = n
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NotZero(t, pid, "no pid in the pause file")
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// TestSecurity_RollbackHostileLinks: a checkpoint tree (a fetched copy, a
// hand-made commit) holds links git cannot or would not write as they
// are: a target longer than the system takes (ENAMETOOLONG) beside an
// absolute one into a folder outside. The in-process write fails as git's
// symlink() would: the rollback fails undone, the tree as it was, and
// nothing outside is touched.
func TestSecurity_RollbackHostileLinks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := env.Outside(precious("victim"))
	env.TurnN("a1", 1) // k1, k2
	before := env.guard(outside)
	readme := treeEntry("100644", "README.md", env.Git("rev-parse", "HEAD:README.md"))
	long := treeEntry("120000", "long", env.hashObject("blob", strings.Repeat("a/", 3000)))
	abs := treeEntry("120000", "abs", env.hashObject("blob", filepath.Join(outside, "victim")))
	tree := env.hashObject("tree", readme+abs+long)
	forged := env.forgedCheckpoint("a1", 3, "turn_end", tree)
	rec := env.Records("checkpoint.taken")[1]
	for _, k := range []string{"seq", "ts", "type"} {
		delete(rec, k)
	}
	rec["checkpoint"] = "k3"
	rec["repos"].([]any)[0].(map[string]any)["commit"] = forged
	env.AppendLog("checkpoint.taken", rec)
	files := env.RecipeTree()
	args := []string{"--agent=a1", "--checkpoint=k3", "--restore=files", "--outside=overwrite"}
	plan := env.DryRun(args...).Plan
	r := env.Venom("rollback", append(args, "--plan="+plan, "--json")...)
	r.Fails(t, 1, "failed.rollback_undone")
	require.Contains(t, r.Stdout, "file name too long")
	require.Equal(t, files, env.RecipeTree(), "the tree is not as it was")
	for _, p := range []string{"abs", "long"} {
		_, err := os.Lstat(env.Path(p))
		require.True(t, os.IsNotExist(err), "%s was left: %v", p, err)
	}
	env.assertGuarded(before, outside)
}

// TestSecurity_StateSparseFileRead: a state file another process made
// sparse and huge (truncate -s 200G costs nothing on disk) is damaged, not
// a buffer of its size: a capture that reads the scan record, the private
// index's meta or the memo's listing whole ended "fatal error: runtime: out
// of memory", every capture after it too. Each is taken as damaged, as
// any other damage is, and the capture goes on.
func TestSecurity_StateSparseFileRead(t *testing.T) {
	t.Parallel()
	for _, ext := range []string{"scan", "json", "listing"} {
		t.Run(ext, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Checkpoint("--agent=a1")
			env.Write("README.md", "changed\n")
			env.Checkpoint("--agent=a1") // the memo and its listing
			files, err := filepath.Glob(filepath.Join(stateDir(t, env), "index", "*."+ext))
			require.NoError(t, err)
			require.NotEmpty(t, files, "no .%s file in venom/index", ext)
			for _, f := range files {
				require.NoError(t, os.Truncate(f, 200<<30))
			}
			env.Write("README.md", "changed again\n")
			r := env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			require.NotContains(t, r.Stderr, "fatal error")
			require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 3))
		})
	}
}
