package agents

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/journal"
)

// fold builds a state from records written as JSON, seq in order.
func fold(t *testing.T, recs ...string) *State {
	t.Helper()
	var es []journal.Entry
	for i, r := range recs {
		var e journal.Entry
		require.NoError(t, json.Unmarshal([]byte(r), &e), r)
		e.Seq = int64(i + 1)
		es = append(es, e)
	}
	return Fold(es)
}

func taken(agent, k, reason, turn, commit string) string {
	tj := "null"
	if turn != "" {
		tj = `"` + turn + `"`
	}
	return `{"type":"checkpoint.taken","agent":"` + agent + `","checkpoint":"` + k + `","reason":"` + reason +
		`","turn":` + tj + `,"repos":[{"repo":".","commit":"` + commit + `"}]}`
}

func kinds(ws []Window) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.From.Checkpoint+">"+w.To.Checkpoint+":"+w.Kind)
	}
	return out
}

func TestWindows(t *testing.T) {
	reg := func(a string) string {
		return `{"type":"agent.registered","agent":"` + a + `","tree":"/t","isolation":"in_place","harness":"none"}`
	}
	st := fold(t,
		reg("a1"), reg("a2"),
		`{"type":"turn.started","agent":"a1","turn":"t1"}`,
		taken("a1", "k1", "turn_start", "t1", "c1"),
		taken("a1", "k2", "manual", "t1", "c2"), // mid-turn: splits the turn window
		`{"type":"turn.ended","agent":"a1","turn":"t1"}`,
		taken("a1", "k3", "turn_end", "t1", "c3"),
		`{"type":"checkpoint.reused","agent":"a1","checkpoint":"k3","reason":"turn_start","turn":"t2"}`,
		`{"type":"turn.started","agent":"a1","turn":"t2"}`,
		`{"type":"turn.started","agent":"a2","turn":"t1"}`, // another agent's turn on the tree
		taken("a2", "k1", "turn_start", "t1", "c4"),
		`{"type":"turn.ended","agent":"a2","turn":"t1"}`,
		taken("a2", "k2", "turn_end", "t1", "c5"),
		`{"type":"turn.ended","agent":"a1","turn":"t2"}`,
		taken("a1", "k4", "turn_end", "t2", "c6"),
		taken("a1", "k5", "pre_rollback", "", "c7"),
		taken("a1", "k6", "rollback", "", "c8"),
		`{"type":"checkpoint.failed","agent":"a1","reason":"turn_start","code":"failed.checkpoint_git"}`,
		taken("a1", "k7", "turn_end", "t3", "c9"),
	)
	a := st.Agent("a1")
	got := kinds(st.Windows(a, a.Checkpoint("k1").Seq))
	assert.Equal(t, []string{
		"k1>k2:turn", "k2>k3:turn", // t1, split by the manual capture
		"k3>k3:gap", // turn_end t1 to the reuse at turn_start t2: between turns
		// a2's turn ran inside a1's t2: its window is a gap, the halves
		// before its turn_start and after its turn_end are a1's turn.
		"k3>k1:turn", "k1>k2:gap", "k2>k4:turn",
		"k4>k5:gap", "k5>k6:rollback",
		"k6>k7:gap", // across the failed capture
	}, got)
}

func TestNotesForAgentAndSharers(t *testing.T) {
	reg := func(a, tree string) string {
		return `{"type":"agent.registered","agent":"` + a + `","tree":"` + tree + `","isolation":"in_place","harness":"none"}`
	}
	st := fold(t, reg("a1", "/t"), reg("a2", "/t"), reg("a3", "/other"),
		`{"type":"rollback.ended","agent":"a1","checkpoint":"k1","safety":"k2","restore":"all","ok":true,"after":"k3"}`)
	assert.Nil(t, st.Agent("a1").NotePending, "restore=all with the conversation: no note for the agent")
	assert.NotNil(t, st.Agent("a2").NotePending, "a sharer gets the note")
	assert.Nil(t, st.Agent("a3").NotePending)
	st = fold(t, reg("a1", "/t"), reg("a2", "/t"),
		`{"type":"rollback.ended","agent":"a1","checkpoint":"k1","safety":"k2","restore":"files","ok":true,"after":"k3"}`)
	assert.NotNil(t, st.Agent("a1").NotePending)
	assert.NotNil(t, st.Agent("a2").NotePending)
	st = fold(t, reg("a1", "/t"), reg("a2", "/t"),
		`{"type":"rollback.ended","agent":"a1","checkpoint":"k1","safety":"k2","restore":"files","ok":false,"code":"failed.rollback_undone"}`)
	assert.Nil(t, st.Agent("a1").NotePending, "a failed rollback leaves no note")
	assert.Nil(t, st.Agent("a2").NotePending)
}
