package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Turns, reuses, relabels, prunes and clean change an agent's state, and a
// client following the stream sees each: a turn_start
// that reused a checkpoint publishes its turn and the reuse.
func TestEvents_TurnsReusesRelabelsPrunesAndCleanArePublished(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Checkpoint("--agent=a1", "--reason=turn_start") // t1, k1
	env.Write("a.txt", "1\n")
	env.Checkpoint("--agent=a1", "--reason=turn_end", "--label=first") // k2
	env.Checkpoint("--agent=a1", "--reason=turn_start")                // t2, reuses k2
	env.Checkpoint("--agent=a1", "--reason=turn_end")                  // reuses k2
	env.SetGlobal("venom.keep", "1")
	env.Venom("checkpoint", "prune", "--agent=a1").OK(t) // k1 goes
	env.Venom("checkpoint", "clean", "--agent=a1").OK(t)

	evs := eventLines(t, env.Venom("checkpoint", "events", "--json").OK(t).Stdout)
	assert.Equal(t, []string{
		"agent.turn_started", "agent.checkpoint", "agent.turn_ended", "agent.checkpoint",
		"agent.turn_started", "agent.checkpoint_reused", "agent.turn_ended", "agent.checkpoint_reused",
		"agent.checkpoints_pruned", "agent.archived", "agent.checkpoints_removed"}, types(evs))
	assert.Equal(t, publishedSeqs(env), seqs(evs), "an event's seq is its record's")
	assert.Equal(t, map[string]any{"agent": "a1", "turn": "t2"}, evs[4].Data)
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k2", "reason": "turn_start", "turn": "t2",
		"relabeled": false, "label": nil, "previous_label": nil}, evs[5].Data)
	assert.Equal(t, map[string]any{"agent": "a1", "turn": "t2", "no_start": false, "no_end": false}, evs[6].Data)
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoints": []any{"k1"}}, evs[8].Data)
	assert.Equal(t, map[string]any{"agent": "a1"}, evs[9].Data)
	assert.Equal(t, map[string]any{"agent": "a1", "repo": ".", "removed": float64(1), "kept": float64(0)}, evs[10].Data)

	// Filters know the new types, by name and by prefix.
	only := eventLines(t, env.Venom("checkpoint", "events", "--json", "--types=agent.turn_started,agent.archived").OK(t).Stdout)
	assert.Equal(t, []string{"agent.turn_started", "agent.turn_started", "agent.archived"}, types(only))

	out := env.Venom("checkpoint", "events").OK(t).Stdout
	assert.Contains(t, out, " agent.turn_started a1/t2\n")
	assert.Contains(t, out, " agent.checkpoint_reused a1/k2 turn_start t2\n")
	assert.Contains(t, out, " agent.checkpoints_pruned a1 k1\n")
	assert.Contains(t, out, " agent.checkpoints_removed a1 removed 1 kept 0\n")
}

// A label asked of a capture that dedups to k3 is the explicit relabel
// docs/checkpoints.md#reuse describes: said by the command, recorded in the log with the label
// it replaced, and published. A label with a newline or
// a control character is shown quoted, one table row each.
func TestLabel_ReuseRelabelsExplicitlyAndNewlinesNeverBreakATable(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "1\n")
	env.Checkpoint("--agent=a1", "--label=first") // k1
	out := env.Venom("checkpoint", "--label=again").OK(t).Stdout
	assert.Equal(t, "Nothing changed since a1/k1: relabeled it \"again\" (was \"first\", which stays)\n", out)
	assert.Equal(t, "again", *env.Item(t, "a1", "k1").Label)
	assert.Equal(t, []string{"first", "again"}, env.Item(t, "a1", "k1").Labels)

	reused := env.Records("checkpoint.reused")
	require.Len(t, reused, 1)
	assert.Equal(t, "again", reused[0]["label"])
	assert.Equal(t, "first", reused[0]["previous_label"])
	evs := eventLines(t, env.Venom("checkpoint", "events", "--json", "--types=agent.checkpoint_reused").OK(t).Stdout)
	require.Len(t, evs, 1)
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1", "reason": "manual", "turn": nil,
		"relabeled": true, "label": "again", "previous_label": "first"}, evs[0].Data)
	// Both labels, the old one first, within 80 columns.
	assert.Contains(t, env.Venom("checkpoint", "events").OK(t).Stdout,
		" agent.checkpoint_reused a1/k1 relabeled \"first\" → \"again\"\n")

	// A reuse without a label leaves the label alone, and says nothing of it.
	assert.Equal(t, "Nothing changed since a1/k1\n", env.Venom("checkpoint").OK(t).Stdout)
	assert.Equal(t, "again", *env.Item(t, "a1", "k1").Label)

	// Newlines and escapes: quoted in every table and line.
	env.Write("a.txt", "2\n")
	env.Checkpoint("--label=two\nlines\x1b[31m") // k2
	table := env.Venom("checkpoint", "list").OK(t).Stdout
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	require.Len(t, lines, 3, table) // header, k2, k1
	assert.Contains(t, lines[1], `"two\nlines\033[31m"`)
	assert.NotContains(t, table, "\x1b")
	for _, l := range strings.Split(strings.TrimRight(env.Venom("checkpoint", "events").OK(t).Stdout, "\n"), "\n") {
		assert.Regexp(t, `^\d+ `, l, "every event is one line")
	}
}
