package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Faults: each write step of a capture fails in turn, and the disk
// fills up. Every failure is a registry error (docs/errors.md), changes nothing the user can
// see, leaves no ref the log does not name and no torn log line, and the
// next command works.

// assertWholeLog checks that every line of log.jsonl is one whole record
// and that seq has no gap.
func (e *Env) assertWholeLog(t *testing.T) {
	t.Helper()
	common := e.CommonDir()
	b, err := os.ReadFile(filepath.Join(common, "venom", "log.jsonl"))
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	if len(b) == 0 {
		return
	}
	require.True(t, bytes.HasSuffix(b, []byte("\n")), "the log ends in a torn line")
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var rec struct {
			Seq int `json:"seq"`
		}
		require.NoError(t, json.Unmarshal(line, &rec), "line %d: %q", i+1, line)
		require.Equal(t, i+1, rec.Seq, "seq has a gap")
	}
}

// assertRefsLogged checks that every checkpoint ref is named by a
// checkpoint.taken record with the same commit (docs/checkpoints.md#the-log).
func (e *Env) assertRefsLogged(t *testing.T) {
	t.Helper()
	logged := map[string]string{}
	for _, r := range e.LogRecords() {
		if r["type"] != "checkpoint.taken" {
			continue
		}
		repos := r["repos"].([]any)
		n := strings.TrimPrefix(r["checkpoint"].(string), "k")
		logged[fmt.Sprintf("refs/venom/checkpoints/%s/%s", r["agent"], n)] = repos[0].(map[string]any)["commit"].(string)
	}
	// git for-each-ref's list, read by listRefs where it is sure.
	for _, r := range e.listRefs("refs/venom/checkpoints") {
		require.Equal(t, logged[r.name], r.oid, "%s is not the logged commit", r.name)
	}
}

func TestRobust_CaptureFaultPoints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ point, code string }{
		{"capture-scan", "failed.checkpoint_git"},
		{"capture-object-write", "failed.checkpoint_git"},
		{"capture-write-tree", "failed.checkpoint_git"},
		{"commit-write", "failed.checkpoint_git"},
		{"ref-create", "failed.checkpoint_git"},
		{"log-append", "failed.state"},
		{"log-fsync", "failed.state"},
	} {
		tc := tc
		t.Run(tc.point, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("a.txt", "a\n")
			env.CaptureLikeRecipe(t, "a1")
			env.Write("a.txt", "changed\n")
			env.Write("new.txt", "new\n")
			snap := env.Snapshot()
			for _, reason := range []string{"manual", "turn_start"} {
				env.VenomIn(env.Dir, []string{"VENOM_TEST_FAIL_AT=" + tc.point}, "checkpoint", "--agent=a1",
					"--reason="+reason, "--json").Fails(t, 1, tc.code)
				env.AssertUntouched(t, snap)
				env.assertWholeLog(t)
				env.assertRefsLogged(t)
				require.Equal(t, "refs/venom/checkpoints/a1/1", env.Git("for-each-ref", "--format=%(refname)", "refs/venom"))
			}
			// The next capture works and is right.
			env.CaptureLikeRecipe(t, "a1")
			require.Equal(t, "k2", env.lastTaken().Checkpoint)
			env.Write("a.txt", "third\n")
			env.CaptureLikeRecipe(t, "a1")
		})
	}
}

// newEnvOn is NewBareEnv with its world on a filesystem of size bytes, or
// nil when this machine cannot mount one.
func newEnvOn(t *testing.T, size string) *Env {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	mnt := filepath.Join(root, "small")
	require.NoError(t, os.MkdirAll(mnt, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (%v: %s); the fault points cover the same writes", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	env := &Env{t: t, Root: mnt, Dir: filepath.Join(mnt, "repo"), Home: filepath.Join(root, "home")}
	require.NoError(t, os.MkdirAll(env.Home, 0o755))
	require.NoError(t, os.MkdirAll(env.Dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(env.Home, ".gitconfig"),
		[]byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644))
	env.Git("init", "-q")
	return env
}

// fillUpTo fills the filesystem of dir until only free bytes are left, and
// returns the filler's path.
func fillUpTo(t *testing.T, dir string, free int64) string {
	t.Helper()
	filler := filepath.Join(dir, "filler")
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	avail := int64(st.Bavail) * int64(st.Bsize)
	if avail > free {
		f, err := os.OpenFile(filler, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		_, _ = f.Write(make([]byte, avail-free))
		require.NoError(t, f.Close())
	}
	return filler
}

func TestRobust_DiskFullCapture(t *testing.T) {
	t.Parallel()
	env := newEnvOn(t, "4m")
	env.Write("README.md", "hello\n")
	env.Commit("initial")
	env.Write("a.txt", "a\n")
	env.CaptureLikeRecipe(t, "a1")
	big := make([]byte, 400<<10)
	_, _ = rand.Read(big)
	env.Write("random.bin", string(big))
	env.Write("a.txt", "changed\n")
	// From no room at all to almost enough, each capture succeeds whole or
	// fails cleanly.
	failures := 0
	for _, free := range []int64{0, 4 << 10, 64 << 10, 256 << 10, 380 << 10} {
		filler := fillUpTo(t, env.Root, free)
		snap := env.Snapshot()
		before := env.Git("for-each-ref", "--format=%(refname)", "refs/venom")
		r := env.Venom("checkpoint", "--agent=a1", "--json")
		if err := os.Remove(filler); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if r.Code == 0 {
			require.Equal(t, env.RecipeTree(), env.Git("rev-parse", env.lastTaken().Repos[0].Commit+"^{tree}"))
		} else {
			failures++
			t.Logf("free %d: %s", free, strings.TrimSpace(r.Stdout))
			require.Equal(t, 1, r.Code, "free %d: %s %s", free, r.Stdout, r.Stderr)
			require.Contains(t, r.Stdout, `"code":"failed.`, "free %d", free)
			require.Equal(t, before, env.Git("for-each-ref", "--format=%(refname)", "refs/venom"), "free %d: a ref was left", free)
		}
		env.AssertUntouched(t, snap)
		env.assertWholeLog(t)
		env.assertRefsLogged(t)
	}
	require.NotZero(t, failures, "the disk never filled up")
	env.Write("a.txt", "after the disk was freed\n")
	env.CaptureLikeRecipe(t, "a1")
}
