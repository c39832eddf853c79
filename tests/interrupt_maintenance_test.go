package tests

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// maintenanceEnv is an agent with six turns and venom.keep 2 set after
// them, so that a prune has four checkpoints' refs to delete.
func maintenanceEnv(t *testing.T) *Env {
	t.Helper()
	env := NewEnv(t)
	for i := 0; i < 6; i++ {
		env.Turn("a1", func() { env.Write("f.txt", string(rune('a'+i))+"\n") })
	}
	env.SetGlobal("venom.keep", "2")
	return env
}

// TestPrune_SignalBeforeTheDeletionsDeletesNothing: a stop signal that
// reaches prune before its ref transaction (its last safe point) ends it
// failed.interrupted with every ref and the log as they were.
func TestPrune_SignalBeforeTheDeletionsDeletesNothing(t *testing.T) {
	t.Parallel()
	for _, sig := range stopSignals {
		t.Run(sigName(sig), func(t *testing.T) {
			t.Parallel()
			env := maintenanceEnv(t)
			refs := env.gitRefs("", "refs/venom/checkpoints/")
			p := env.pauseCmd("refs-delete", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
				return env.direct(extra, "checkpoint", "prune", "--json")
			})
			signalledFailure(t, signalPaused(t, p, sig), sig)
			require.Equal(t, refs, env.gitRefs("", "refs/venom/checkpoints/"))
			require.Empty(t, env.Records("checkpoint.pruned"))
			require.True(t, lockFree(env))
			// The next prune deletes them.
			var res struct {
				Checkpoints []struct {
					Pruned []string `json:"pruned"`
				} `json:"checkpoints"`
			}
			env.Venom("checkpoint", "prune", "--json").OK(t).JSON(t, &res)
			require.Len(t, res.Checkpoints, 1)
			require.NotEmpty(t, res.Checkpoints[0].Pruned)
			require.Len(t, env.Records("checkpoint.pruned"), 1)
		})
	}
}

// TestClean_SignalDuringTheDeletionsFinishesTruthfully: archiving, deleting
// and logging go together. A signal that arrives once a clean has begun
// them does not cut them (git's update-ref is not killed): the clean ends
// as it would have, and says what it did, which is what plain git shows.
func TestClean_SignalDuringTheDeletionsFinishesTruthfully(t *testing.T) {
	t.Parallel()
	for _, sig := range stopSignals {
		t.Run(sigName(sig), func(t *testing.T) {
			t.Parallel()
			env := maintenanceEnv(t)
			p := env.pauseCmd("refs-delete", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
				return env.direct(extra, "checkpoint", "clean", "--agent=a1", "--json")
			})
			r := signalPaused(t, p, sig)
			require.Equal(t, 0, r.Code, "%s%s", r.Stdout, r.Stderr)
			var res struct {
				Checkpoints []struct {
					Removed int   `json:"removed"`
					Failed  []any `json:"failed"`
				} `json:"checkpoints"`
			}
			r.JSON(t, &res)
			require.Len(t, res.Checkpoints, 1)
			require.Empty(t, res.Checkpoints[0].Failed, "%s", r.Stdout)
			require.Equal(t, 7, res.Checkpoints[0].Removed)
			require.Empty(t, env.gitRefs("", "refs/venom/checkpoints/a1/"))
			require.Len(t, env.Records("agent.archived"), 1)
			require.Len(t, env.Records("checkpoint.removed"), 1)
			require.True(t, lockFree(env))
		})
	}
}

// signalledFailure is a signalled command's failed.interrupted envelope.
func signalledFailure(t *testing.T, r Result, sig syscall.Signal) {
	t.Helper()
	require.Equal(t, 1, r.Code, "%s%s", r.Stdout, r.Stderr)
	require.NotContains(t, r.Stderr, "panic:")
	e := r.Map(t)["error"].(map[string]any)
	require.Equal(t, "failed.interrupted", e["code"], "%s", r.Stdout)
	require.Equal(t, sigName(sig), e["data"].(map[string]any)["signal"])
}

// TestFork_SignalDuringTheForkFinishesIt: registering a fork and
// recording its checkpoint go together; a signal once they began lets
// them finish, and the fork is whole (its ref is written through
// libgit2, which the signal never reached; this guards that it stays so).
func TestFork_SignalDuringTheForkFinishesIt(t *testing.T) {
	t.Parallel()
	for _, sig := range stopSignals {
		t.Run(sigName(sig), func(t *testing.T) {
			t.Parallel()
			env := maintenanceEnv(t)
			p := env.pauseCmd("ref-create", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
				return env.direct(extra, "checkpoint", "fork", "--agent=f1", "--from=a1", "--json")
			})
			r := signalPaused(t, p, sig)
			require.Equal(t, 0, r.Code, "%s%s", r.Stdout, r.Stderr)
			require.Len(t, env.gitRefs("", "refs/venom/checkpoints/f1/"), 1)
			var forked []map[string]any
			for _, rec := range env.Records("agent.registered") {
				if rec["agent"] == "f1" {
					forked = append(forked, rec)
				}
			}
			require.Len(t, forked, 1)
			require.True(t, lockFree(env))
		})
	}
}

// TestShare_SignalBeforePushOrFetchWritesNothing: a signal at push's or
// fetch's last safe point (before git push; before the fetched refs are
// written) is failed.interrupted with nothing pushed or written.
func TestShare_SignalBeforePushOrFetchWritesNothing(t *testing.T) {
	t.Parallel()
	for _, sig := range stopSignals {
		t.Run(sigName(sig), func(t *testing.T) {
			t.Parallel()
			env := maintenanceEnv(t)
			remote := env.bareRemote("remote")
			env.Git("remote", "add", "origin", remote)
			p := env.pauseCmd("share-push", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
				return env.direct(extra, "checkpoint", "push", "--agent=a1", "--json")
			})
			signalledFailure(t, signalPaused(t, p, sig), sig)
			require.Empty(t, env.gitRefs(remote, "refs/venom/"))

			env.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
			require.NotEmpty(t, env.gitRefs(remote, "refs/venom/"))
			b := NewBareEnv(t)
			b.Git("remote", "add", "origin", remote)
			p = b.pauseCmd("share-fetch-refs", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
				return b.direct(extra, "checkpoint", "fetch", "--json")
			})
			signalledFailure(t, signalPaused(t, p, sig), sig)
			require.Empty(t, b.gitRefs("", "refs/venom/"))
			require.True(t, lockFree(b))
			b.Venom("checkpoint", "fetch", "--json").OK(t)
			require.NotEmpty(t, b.gitRefs("", "refs/venom/remotes/"))
		})
	}
}

// TestShare_SignalWhileFetchReadsALogWritesNothing: a signal while fetch
// reads the copies' logs (git cat-file writes a large one out, on the
// command's context) is failed.interrupted, nothing written, as at its last
// safe point.
func TestShare_SignalWhileFetchReadsALogWritesNothing(t *testing.T) {
	t.Parallel()
	env := maintenanceEnv(t)
	remote := env.bareRemote("remote")
	env.Git("remote", "add", "origin", remote)
	env.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
	b := NewBareEnv(t)
	b.Git("remote", "add", "origin", remote)
	p := b.pauseCmd("share-fetch-log", []string{"VENOM_TEST_PAUSE_RESUME=1"}, func(extra []string) *exec.Cmd {
		return b.direct(extra, "checkpoint", "fetch", "--json")
	})
	signalledFailure(t, signalPaused(t, p, syscall.SIGINT), syscall.SIGINT)
	require.Empty(t, b.gitRefs("", "refs/venom/"))
	require.True(t, lockFree(b))
	b.Venom("checkpoint", "fetch", "--json").OK(t)
	require.NotEmpty(t, b.gitRefs("", "refs/venom/remotes/"))
}
