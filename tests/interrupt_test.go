package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Stop signals (SIGINT, SIGTERM, SIGHUP) during a mutating command
// (docs/rollback.md#interrupts): the command stops at its next safe
// point, a rollback runs its way back on a context the signal did not
// end, and the reported code says what the tree holds. The crash tests
// (crash_*_test.go, rollback_crash_test.go) are SIGKILL's.

var stopSignals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// interruptEnv: a1 unguarded; its turn changes 60 of 90 files, deletes
// 10, adds 30 in new/sub, and commits: the rollback to k1 deletes 30
// files, writes 70 and moves HEAD back one commit.
func interruptEnv(t *testing.T) *Env {
	t.Helper()
	env := NewEnv(t)
	for i := 0; i < 90; i++ {
		env.Write(fmt.Sprintf("d%d/f%02d.txt", i%3, i), fmt.Sprintf("base %d\n", i))
	}
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	for i := 0; i < 60; i++ {
		env.Write(fmt.Sprintf("d%d/f%02d.txt", i%3, i), fmt.Sprintf("changed by the turn %d\n", i))
	}
	for i := 60; i < 70; i++ {
		env.Remove(fmt.Sprintf("d%d/f%02d.txt", i%3, i))
	}
	for i := 0; i < 30; i++ {
		env.Write(fmt.Sprintf("new/sub/n%02d.txt", i), fmt.Sprintf("new %d\n", i))
	}
	env.Git("add", "-A")
	env.Commit("the agent's commit")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	return env
}

// direct is git-venom-<cmd> itself, not through git: git's wrapper dies
// by the signal it passes on to its child, and its exit would hide ours.
func (e *Env) direct(env []string, cmd string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(binDir, "git-venom-"+cmd), args...)
	c.Dir = e.Dir
	c.Env = append(e.Environ(), env...)
	return c
}

// signalPaused sends sig to a command paused at its point (the whole
// process group, as a terminal's Ctrl-C reaches every process of the
// foreground job), lets it go on, and waits for its end.
func signalPaused(t *testing.T, p *paused, sig syscall.Signal) Result {
	t.Helper()
	require.NoError(t, syscall.Kill(-p.cmd.Process.Pid, sig))
	// The signal is handled on its own goroutine: the command goes on
	// once it has been, as a person's Ctrl-C lands between two files.
	time.Sleep(100 * time.Millisecond)
	return p.resume(t)
}

// signalAfter runs git-venom-<cmd> itself and sends its process group
// sig after d (as a terminal's Ctrl-C reaches the whole foreground job):
// signalGroup. Code is -1 when the signal ended it unhandled.
func (e *Env) signalAfter(t *testing.T, d time.Duration, sig syscall.Signal, cmd string, args ...string) Result {
	t.Helper()
	r, _ := signalGroup(t, e.direct(nil, cmd, args...), d, sig)
	require.NotContains(t, r.Stderr, "panic:")
	require.NotContains(t, r.Stderr, "failed.rollback_partial")
	require.True(t, lockFree(e), "the lock is still held")
	return r
}

// runPrintedUndo runs the undo a finished rollback printed, as printed.
func runPrintedUndo(t *testing.T, env *Env, out string) {
	t.Helper()
	printed := out[strings.Index(out, "undo: ")+len("undo: "):]
	undo := strings.Fields(strings.TrimSpace(printed))
	require.Equal(t, []string{"git", "venom-rollback", "--undo"}, undo[:3], "%s", out)
	env.Rollback(undo[2:]...)
}

// assertUndone checks with plain git that an interrupted rollback left
// the tree, the index, HEAD and the branch as before and said so:
// failed.rollback_undone, logged, the lock free, git fsck clean.
func assertUndone(t *testing.T, env *Env, r Result, sig syscall.Signal, s string, before Snapshot) {
	t.Helper()
	require.Equal(t, 1, r.Code, "%s%s", r.Stdout, r.Stderr)
	require.NotContains(t, r.Stderr, "panic:")
	e := r.Map(t)["error"].(map[string]any)
	require.Equal(t, "failed.rollback_undone", e["code"], "%s", r.Stdout)
	require.Equal(t, "interrupted ("+sigName(sig)+")", e["data"].(map[string]any)["reason"])
	require.Equal(t, s, env.RecipeTree(), "the tree is not S again")
	after := env.Snapshot()
	require.Equal(t, before.Index, after.Index, "the index is not as it was")
	require.Equal(t, before.Head, after.Head)
	require.Equal(t, before.Refs, after.Refs, "the branch is not back")
	ended := env.Records("rollback.ended")
	require.Len(t, ended, 1)
	require.Equal(t, "failed.rollback_undone", ended[0]["code"])
	require.True(t, lockFree(env), "the lock is still held")
	f := env.GitRaw("fsck", "--no-dangling", "--no-progress")
	require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "interrupt"
	case syscall.SIGTERM:
		return "terminated"
	}
	return "hangup"
}

// TestRollback_SignalDuringWritesIsUndone: each stop signal, during the
// deletions, between two files placed (some placed, some not) and with the
// branch moved: the rollback stops, its way back (on a context the signal
// did not end) puts S back, and it says failed.rollback_undone.
func TestRollback_SignalDuringWritesIsUndone(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"rollback-unlink-each#10", "rollback-place-each#40", "rollback-head"} {
		for _, sig := range stopSignals {
			t.Run(strings.ReplaceAll(point, "#", "-")+"/"+sigName(sig), func(t *testing.T) {
				t.Parallel()
				env := interruptEnv(t)
				s := env.RecipeTree()
				before := env.Snapshot()
				plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
				p := env.pauseCmd(point, []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
					return env.direct(extra, "rollback", "--agent=a1", "--checkpoint=k1", "--restore=files",
						"--plan="+plan, "--json")
				})
				r := signalPaused(t, p, sig)
				assertUndone(t, env, r, sig, s, before)
				// The safety checkpoint holds S, and a rollback works again.
				require.Equal(t, s, env.CheckpointTree("a1", 3))
				env.Rollback("--checkpoint=k1", "--restore=files")
				require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
			})
		}
	}
}

// TestRollback_SecondSignalDuringWayBack: a second Ctrl-C while the
// rollback is undone does not stop the way back (git ignores signals in
// its critical sections the same way); the command says it goes on, and
// the report is still true.
func TestRollback_SecondSignalDuringWayBack(t *testing.T) {
	t.Parallel()
	env := interruptEnv(t)
	s := env.RecipeTree()
	before := env.Snapshot()
	plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
	// Paused in the way back, after the first signal sent it there.
	p := env.pauseCmd("rollback-undo", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
		return env.direct(append(extra, "VENOM_TEST_FAIL_AT=rollback-place-each#20"), "rollback", "--agent=a1",
			"--checkpoint=k1", "--restore=files", "--plan="+plan, "--json")
	})
	r := signalPaused(t, p, syscall.SIGINT)
	require.Equal(t, 1, r.Code, "%s%s", r.Stdout, r.Stderr)
	require.Contains(t, r.Stderr, "interrupt: ignored while the rollback is undone")
	require.Equal(t, "failed.rollback_undone", r.Map(t)["error"].(map[string]any)["code"])
	require.Equal(t, s, env.RecipeTree())
	require.Equal(t, before.Refs, env.Snapshot().Refs)
}

// TestRollback_SignalAtRandomMoments (seeded: VENOM_TEST_SEED replays):
// SIGINT, SIGTERM or SIGHUP at a random moment of a real call. Whatever
// the moment, the report matches the tree: done (the tree is T's, and the
// undo it prints works), failed.interrupted before the safety checkpoint
// or failed.rollback_undone after it (the tree is S), never partial, or
// killed by the signal before the process could handle it (nothing
// begun); the lock free, git fsck clean.
func TestRollback_SignalAtRandomMoments(t *testing.T) {
	t.Parallel()
	rnd, tries := crashRand(t, 6)
	env := interruptEnv(t)
	s := env.RecipeTree()
	k1 := env.CheckpointTree("a1", 1)
	// How long a whole rollback takes here, to spread the signals over it.
	// HEAD stays (--keep-head): undoing a rollback that moved it is
	// another matter.
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--keep-head"}
	plan := env.DryRun(args...).Plan
	_, span := env.timed(t, nil, "rollback", append(args, "--plan="+plan, "--json")...)
	env.Rollback("--undo", "--agent=a1")
	require.Equal(t, s, env.RecipeTree())
	for try := 0; try < tries; try++ {
		sig := stopSignals[rnd.Intn(len(stopSignals))]
		d := delay(rnd, try, tries, span)
		plan := env.DryRun(args...).Plan
		started := len(env.Records("rollback.started"))
		r := env.signalAfter(t, d, sig, "rollback", append(args, "--plan="+plan)...)
		t.Logf("try %d: %s after %s: exit %d: %s%s", try, sigName(sig), d, r.Code, r.Stdout, r.Stderr)
		f := env.GitRaw("fsck", "--no-dangling", "--no-progress")
		require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)
		switch {
		case r.Code == 0:
			require.Equal(t, k1, env.RecipeTree(), "done, but the tree is not k1's")
			// The undo it printed works as printed.
			runPrintedUndo(t, env, r.Stdout)
		case r.Code == -1:
			// Killed by the signal before its handler was installed, at
			// the start: nothing was begun.
			require.Len(t, env.Records("rollback.started"), started)
		case strings.Contains(r.Stderr, "failed.interrupted"):
			require.Equal(t, 1, r.Code)
		default:
			require.Equal(t, 1, r.Code, "%s", r.Stderr)
			require.Contains(t, r.Stderr, "failed.rollback_undone")
		}
		require.Equal(t, s, env.RecipeTree(), "the tree is not S again")
	}
}

// TestCheckpoint_SignalDuringCapture: a capture stopped by a signal says
// so (failed.interrupted, logged as its checkpoint.failed), not
// failed.checkpoint_git or timeout.checkpoint as before, and leaves no
// checkpoint; the next capture works.
func TestCheckpoint_SignalDuringCapture(t *testing.T) {
	t.Parallel()
	for _, sig := range stopSignals {
		t.Run(sigName(sig), func(t *testing.T) {
			t.Parallel()
			env := interruptEnv(t)
			env.Write("late.txt", "after the turn\n")
			p := env.pauseCmd("capture-scan", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
				return env.direct(extra, "checkpoint", "--agent=a1", "--json")
			})
			signalledFailure(t, signalPaused(t, p, sig), sig)
			require.Len(t, env.Records("checkpoint.taken"), 2)
			failed := env.Records("checkpoint.failed")
			require.Len(t, failed, 1)
			require.Equal(t, "failed.interrupted", failed[0]["code"])
			require.True(t, lockFree(env))
			require.Equal(t, "k3", env.Checkpoint("--agent=a1"))
		})
	}
}

// TestRollback_ProgressCountsAndCtrlCAtATerminal: at a terminal the real
// call's progress counts files as git's does, "Rolling back: 84% (84/100)";
// Ctrl-C then shows the way back, "interrupted; undoing…", and a second
// Ctrl-C is answered, not obeyed.
func TestRollback_ProgressCountsAndCtrlCAtATerminal(t *testing.T) {
	t.Parallel()
	env := interruptEnv(t)
	s := env.RecipeTree()
	plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
	pause := filepath.Join(env.Root, "pause")
	env.Extra = []string{"VENOM_TEST_PAUSE_AT=rollback-place-each#40,rollback-undo", "VENOM_TEST_PAUSE_FILE=" + pause,
		"VENOM_TEST_PAUSE_RESUME=1"}
	// At each pause: let the line be drawn, then Ctrl-C (SIGINT to the
	// process the pause file names), then go on.
	go func() {
		for i := 0; i < 2; i++ {
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if b, err := os.ReadFile(pause); err == nil && len(b) > 0 {
					time.Sleep(1500 * time.Millisecond)
					var pid int
					_, _ = fmt.Sscan(string(b), &pid)
					_ = syscall.Kill(pid, syscall.SIGINT)
					time.Sleep(200 * time.Millisecond)
					_ = os.Remove(pause)
					break
				}
			}
		}
	}()
	screen, code := env.ptyRun(t, nil, "rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--plan="+plan)
	env.Extra = nil
	require.Equal(t, 1, code, screen)
	require.Regexp(t, `Rolling back: \d+% \(\d+/100\)`, screen)
	require.Contains(t, screen, "interrupted; undoing…")
	require.Contains(t, screen, "interrupt: ignored while the rollback is undone")
	require.Contains(t, screen, "failed.rollback_undone")
	require.Equal(t, s, env.RecipeTree())

	// -q: no progress at all.
	env.Extra = []string{"VENOM_TEST_PAUSE_AT=rollback-place-each#40", "VENOM_TEST_PAUSE_FILE=" + pause,
		"VENOM_TEST_PAUSE_RESUME=1"}
	resumeAfter(t, pause, 1500*time.Millisecond)
	plan = env.DryRun("--checkpoint=k1", "--restore=files").Plan
	screen, code = env.ptyRun(t, nil, "rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--plan="+plan, "-q")
	env.Extra = nil
	require.Equal(t, 0, code, screen)
	require.NotContains(t, screen, "Rolling back:")
}
