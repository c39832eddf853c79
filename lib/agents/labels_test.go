package agents

import (
	"testing"

	"github.com/git-venom/git-venom/lib/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLabels_EveryLabelGivenStays: reuses that set labels add them, the
// newest is Label, a label given again is listed once, a reuse without
// one changes nothing, and the agent's own snapshot part keeps them.
func TestLabels_EveryLabelGivenStays(t *testing.T) {
	s := func(v string) *string { return &v }
	repos := []journal.RepoState{{Repo: ".", Commit: "0123456789012345678901234567890123456789"}}
	st := Fold([]journal.Entry{
		{Seq: 1, Type: journal.AgentRegistered, Agent: "a1", Tree: "/t", Isolation: InPlace, Harness: "none"},
		{Seq: 2, Type: journal.CheckpointTaken, Agent: "a1", Checkpoint: "k1", Reason: "manual", Label: s("before-refactor"), Repos: repos},
		{Seq: 3, Type: journal.CheckpointReused, Agent: "a1", Checkpoint: "k1", Reason: "manual", Label: s("turn_start")},
		{Seq: 4, Type: journal.CheckpointReused, Agent: "a1", Checkpoint: "k1", Reason: "manual"},
		{Seq: 5, Type: journal.CheckpointReused, Agent: "a1", Checkpoint: "k1", Reason: "manual", Label: s("before-refactor")},
		{Seq: 6, Type: journal.CheckpointTaken, Agent: "a1", Checkpoint: "k2", Reason: "manual", Label: s("before-refactor"), Repos: repos},
	})
	a := st.Agents["a1"]
	k1 := a.Checkpoint("k1")
	assert.Equal(t, "before-refactor", *k1.Label)
	assert.Equal(t, []string{"before-refactor", "turn_start"}, k1.Labels)
	assert.True(t, k1.HasLabel("turn_start"))
	var got []string
	for _, c := range a.Labeled("before-refactor") {
		got = append(got, c.Checkpoint)
	}
	assert.Equal(t, []string{"k2", "k1"}, got, "newest first")

	_, parts, err := st.MarshalSplit(6, func(*Agent) bool { return true })
	require.NoError(t, err)
	own, _, err := UnmarshalOwn("a1", parts["a1"])
	require.NoError(t, err)
	assert.Equal(t, []string{"before-refactor", "turn_start"}, own.Agents["a1"].Checkpoint("k1").Labels)
	assert.Equal(t, "before-refactor", *own.Agents["a1"].Checkpoint("k1").Label)
}
