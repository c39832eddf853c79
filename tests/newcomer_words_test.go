package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFirstCheckpoint_SaysTheAgentIsRegistered: the capture that
// registers an agent says so, once; later captures print only their
// id, and a cleaned agent's id registered again says that too.
func TestFirstCheckpoint_SaysTheAgentIsRegistered(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	first := env.Venom("checkpoint", "--agent=a1").OK(t)
	assert.Equal(t, "Checkpoint a1/k1\nAgent a1 is registered now.\n", first.Stdout)
	env.Write("a.txt", "x\n")
	assert.Equal(t, "Checkpoint a1/k2\n", env.Venom("checkpoint").OK(t).Stdout)
	assert.Empty(t, env.Venom("checkpoint", "--agent=b1", "-q").OK(t).Stdout, "-q: nothing")
	env.Venom("checkpoint", "clean", "--agent=b1").OK(t)
	env.Write("a.txt", "y\n")
	again := env.Venom("checkpoint", "--agent=b1").OK(t)
	assert.Contains(t, again.Stdout, "Agent b1 is registered again (it was cleaned).\n")
	// The log agrees: one registration for a1, two for b1.
	n := map[string]int{}
	for _, r := range env.LogRecords() {
		if r["type"] == "agent.registered" {
			n[r["agent"].(string)]++
		}
	}
	assert.Equal(t, map[string]int{"a1": 1, "b1": 2}, n)
}

// TestRollback_PlanHeadersOneWording: a rollback's plan in a shared
// (guarded) tree and a revert's plan say what stays in the same words,
// with no word ("Guarded tree") a newcomer has not met.
func TestRollback_PlanHeadersOneWording(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "base\n")
	env.Commit("base")
	env.Turn("a1", func() { env.Write("a.txt", "turn\n") })
	const stays = "HEAD, the branch and the index stay as they are"
	roll := env.Venom("rollback", "--agent=a1", "k1", "--dry-run").OK(t).Stdout
	revert := env.Venom("rollback", "--agent=a1", "--revert=t1", "--dry-run").OK(t).Stdout
	for what, out := range map[string]string{"rollback": roll, "revert": revert} {
		assert.Contains(t, out, stays, what)
		assert.NotContains(t, strings.ToLower(out), "guarded", what)
	}
	assert.Contains(t, roll, stays+": the tree is shared.\n")
}
