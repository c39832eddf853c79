package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckpoint_CrashRecovery kills a capture with kill -9 at each point
// between its objects and its log record, then checks what docs/checkpoints.md#the-log and
// docs/checkpoints.md#the-log promise: no lock left held, no pending mark, a whole journal,
// and a next capture that goes on from there.
func TestCheckpoint_CrashRecovery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		point string
		// refLeft: the killed capture's ref survives (adopted by the next run).
		refLeft bool
		// logged: its checkpoint.taken survives (written, not yet fsynced:
		// a kill leaves the page cache, and so the line, to the kernel).
		logged bool
	}{
		{"capture-scan", false, false},
		{"ref-create", false, false},
		{"after-ref", true, false},
		{"log-fsync", true, true},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Take(t, "--agent=a1") // k1, so the agent exists before the crash
			env.Write("a.txt", "work\n")
			want := env.RecipeTree()
			snap := env.Snapshot()

			cmd := env.StartPaused(c.point, nil, "checkpoint", "--agent=a1", "--json")
			// While it waits there, a listing says a capture is pending.
			require.True(t, env.List(t, "--agent=a1").Pending, "pending while a capture runs (docs/checkpoints.md#agents-turns-and-states)")
			Kill9(t, cmd)

			env.AssertUntouched(t, snap)
			require.True(t, lockFree(env), "the killed capture's lock is still held")
			l := env.List(t, "--agent=a1")
			require.False(t, l.Pending, "a dead process's pending mark counts")
			env.AssertSeqGapless(t)
			if c.refLeft {
				require.Equal(t, want, env.refTree("refs/venom/checkpoints/a1/2"))
			} else {
				require.Len(t, env.VenomRefs(), 1)
			}
			if c.logged {
				require.Len(t, l.Checkpoints, 2)
			} else {
				require.Len(t, l.Checkpoints, 1, "a checkpoint listed without its record")
			}

			// The next capture of the same state: k2 either way, as a new
			// checkpoint, an adopted one, or the logged one reused.
			res := env.Take(t, "--agent=a1")
			require.Equal(t, "k2", *res.Checkpoint)
			require.Equal(t, c.refLeft, res.Reused)
			require.Equal(t, want, env.CheckpointTree("a1", 2))
			require.Len(t, env.VenomRefs(), 2)
			require.Len(t, env.List(t, "--agent=a1").Checkpoints, 2)
			require.Len(t, env.Records("checkpoint.taken"), 2, "k2 recorded exactly once")
			require.Empty(t, env.TmpFiles())
			env.AssertSeqGapless(t)

			// And on from there.
			env.Write("a.txt", "more work\n")
			require.Equal(t, "k3", *env.Take(t, "--agent=a1").Checkpoint)
		})
	}
}

func TestCheckpoint_TornLogLine(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	log := filepath.Join(env.StateDir(), "log.jsonl")
	before, err := os.ReadFile(log)
	require.NoError(t, err)
	// What a crash mid-write would leave: part of a record, no newline.
	torn := `{"seq":3,"ts":"2026-11-09T12:00:00.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k9","rea`
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(torn)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	// Readers ignore it.
	l := env.List(t, "--agent=a1")
	require.Len(t, l.Checkpoints, 1)
	r := env.Venom("checkpoint", "list", "--agent=a1").OK(t)
	require.NotContains(t, r.Stdout, "k9")

	// The next writer cuts it, and seq goes on without a gap.
	env.Write("a.txt", "x\n")
	require.Equal(t, "k2", *env.Take(t, "--agent=a1").Checkpoint)
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(after), string(before)), "the whole records before the tear changed")
	require.NotContains(t, string(after), `"checkpoint":"k9"`)
	env.AssertSeqGapless(t)
	assert.Equal(t, []string{"agent.registered", "checkpoint.taken", "checkpoint.taken"}, env.LogTypes())

	// A torn line that is whole JSON but has no newline is still torn.
	f, err = os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":4,"ts":"2026-11-09T12:00:00.000Z","type":"agent.archived","agent":"a1"}`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	env.Write("a.txt", "y\n")
	require.Equal(t, "k3", *env.Take(t, "--agent=a1").Checkpoint, "the agent was archived by a torn line")
	env.AssertSeqGapless(t)
	assert.NotContains(t, env.LogTypes(), "agent.archived")
}
