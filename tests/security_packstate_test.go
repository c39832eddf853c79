package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// userDeltaPack makes the person's own pack hold deltas (a file changed a
// little, commit after commit, then git repack -a -d), as most packs git
// writes do, and returns its name and every object it holds.
func userDeltaPack(t *testing.T, w *packWorld) (string, []string) {
	var body strings.Builder
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&body, "line %d of a file the person keeps changing\n", i)
	}
	for i := 0; i < 4; i++ {
		w.Write("big.txt", body.String()+fmt.Sprintf("edit %d\n", i))
		w.Commit(fmt.Sprint("edit ", i))
	}
	w.Git("repack", "-a", "-d", "-q")
	w.Git("prune-packed")
	packs := w.PackNames()
	var name string
	for _, p := range packs {
		if _, err := os.Stat(w.Path(".git/objects/pack/" + p + ".keep")); err != nil {
			name = p
		}
	}
	require.NotEmpty(t, name)
	verify := w.Git("verify-pack", "-v", w.Path(".git/objects/pack/"+name+".idx"))
	require.Contains(t, verify, "chain length = 1", "the person's pack holds no delta")
	var objs []string
	for _, line := range strings.Split(verify, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && len(f[0]) == 40 {
			objs = append(objs, f[0])
		}
	}
	w.userFiles = map[string]string{}
	files, _ := filepath.Glob(w.Path(".git/objects/pack/*"))
	for _, f := range files {
		w.userFiles[f] = fileHash(f)
	}
	return name, objs
}

// requireObjects fails unless git reads every object whole.
func requireObjects(t *testing.T, w *packWorld, objs []string) {
	t.Helper()
	out := w.gitInput(strings.Join(objs, "\n")+"\n", "cat-file", "--batch-check")
	require.NotContains(t, out, "missing")
	w.Git("fsck", "--full", "--no-dangling")
	for _, o := range objs {
		w.Git("cat-file", "-p", o)
	}
}

// TestSecurity_PackRecordNamesAUsersPack: git-venom merges and removes
// only the packs its record ($COMMON/venom/packs) names. A record that
// names a person's pack (written by hand, or by anyone who can write the
// state folder) holding deltas, which a merge refuses to copy, must not
// stop every later merge (the packs piled up, one a capture, until git gc
// --auto repacked them); the person's pack stays as it is and every
// object readable.
func TestSecurity_PackRecordNamesAUsersPack(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
	user, objs := userDeltaPack(t, w)
	require.NoError(t, os.MkdirAll(filepath.Join(w.StateDir(), "packs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.StateDir(), "packs", user), nil, 0o644))
	const n = 12
	for i := 1; i <= n; i++ {
		w.capture(t, i)
	}
	requireObjects(t, w, objs)
	w.check(t, n, 2)
	w.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
	require.Equal(t, "step 1\n", w.Read("work.txt"))
}

// TestSecurity_PackIntentNamesAUsersPack: an interrupted merge's intent
// ($COMMON/venom/packs/merge) names the packs the merged one replaces; the
// next capture finishes it by removing them. An intent naming a person's
// pack whose objects the merged pack does not hold (written by hand, or
// left by an older merge since repacked) must not remove that pack.
func TestSecurity_PackIntentNamesAUsersPack(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t)
	user, objs := userDeltaPack(t, w)
	w.capture(t, 1)
	ours := w.recorded()
	require.Len(t, ours, 1)
	in, _ := json.Marshal(map[string]any{"new": ours[0], "old": []string{user}})
	require.NoError(t, os.WriteFile(filepath.Join(w.StateDir(), "packs", "merge"), in, 0o644))
	w.capture(t, 2)
	requireObjects(t, w, objs)
	w.check(t, 2, 8)
}

// TestSecurity_PackIndexNotAFile: a recorded pack whose index is a FIFO,
// or a link to /dev/zero, planted in objects/pack, must not hang a capture
// that merges packs (it holds the repository's lock) nor make it read
// without end: the capture ends (at worst with timeout.checkpoint, where
// libgit2's own object look-up opens the FIFO, as git would), and the
// other packs are merged still.
func TestSecurity_PackIndexNotAFile(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "zero"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
			fake := "pack-" + strings.Repeat("ab", 20)
			base := w.Path(".git/objects/pack/" + fake)
			require.NoError(t, os.WriteFile(base+".pack", []byte("PACK"), 0o444))
			if kind == "fifo" {
				require.NoError(t, syscall.Mkfifo(base+".idx", 0o644))
			} else {
				require.NoError(t, os.Symlink("/dev/zero", base+".idx"))
			}
			require.NoError(t, os.MkdirAll(filepath.Join(w.StateDir(), "packs"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(w.StateDir(), "packs", fake), nil, 0o644))
			captures := 8
			if kind == "fifo" {
				// Each capture waits out venom.timeout and the backstop's
				// 5 s grace on the FIFO, idle: 10 s a capture at 5s, 6 s at
				// 1s, seconds the suite once ended on.
				w.SetGlobal("venom.timeout", "1s")
				captures = 2
			}
			for i := 1; i <= captures; i++ {
				w.Write("work.txt", fmt.Sprintf("step %d\n", i))
				w.Tick()
				c := w.Command(nil, "checkpoint", "--agent=a1")
				c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				done := make(chan error, 1)
				require.NoError(t, c.Start())
				t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
				go func() { done <- c.Wait() }()
				select {
				case err := <-done:
					if kind == "fifo" && c.ProcessState.ExitCode() == 7 {
						// libgit2, like git, opens every index it searches
						// without O_NONBLOCK: the capture waits on the FIFO
						// until venom.timeout, and says so.
						continue
					}
					require.NoError(t, err)
				case <-time.After(60 * time.Second):
					t.Fatalf("capture %d hangs on the planted %s index", i, kind)
				}
			}
			if kind == "zero" {
				require.Less(t, len(w.PackNames()), 2+2+2+2, "the other packs were not merged")
			}
		})
	}
}
