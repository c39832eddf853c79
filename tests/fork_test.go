package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type forkResult struct {
	Agent          string  `json:"agent"`
	From           string  `json:"from"`
	ThroughTurn    *string `json:"through_turn"`
	Checkpoint     *string `json:"checkpoint"`
	ForkCheckpoint *string `json:"fork_checkpoint"`
}

func TestFork_SharesTheTreeWithItsOwnK1(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a2", func() { env.Write("a.txt", "1\n") }, "--isolation=worktree")
	env.Turn("a2", func() { env.Write("a.txt", "2\n") })
	// A mid-turn manual checkpoint through t2 is not a fork point.
	env.Venom("checkpoint", "--agent=a2", "--reason=turn_start", "--json").OK(t)
	env.Write("a.txt", "3\n")
	env.Venom("checkpoint", "--agent=a2", "--json").OK(t) // k4, mid-turn, through t2
	env.Write("a.txt", "3b\n")
	env.Venom("checkpoint", "--agent=a2", "--reason=turn_end", "--json").OK(t) // k5
	require.False(t, *env.DryRun("--agent=a2", "--checkpoint=k2", "--restore=files", "--outside=overwrite").Guarded, "a worktree agent alone is unguarded")
	snap := env.Snapshot()

	var res forkResult
	env.Venom("checkpoint", "fork", "--agent=a7", "--from=a2", "--through-turn=t2", "--json").OK(t).JSON(t, &res)
	env.AssertUntouched(t, snap)
	require.NotNil(t, res.Checkpoint)
	assert.Equal(t, "a7", res.Agent)
	assert.Equal(t, "a2", res.From)
	assert.Equal(t, "t2", *res.ThroughTurn)
	assert.Equal(t, "k3", *res.Checkpoint, "a2's turn_end of t2, not the newer mid-turn k4")
	assert.Equal(t, "k1", *res.ForkCheckpoint)
	assert.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a2/3"), env.Git("rev-parse", "refs/venom/checkpoints/a7/1"),
		"the fork's ref points at the source's commit")

	l := env.List(t, "--agent=a7")
	require.Len(t, l.Checkpoints, 1)
	assert.Equal(t, "fork", l.Checkpoints[0].Reason)
	assert.Nil(t, l.Checkpoints[0].ThroughTurn)
	assert.False(t, l.Checkpoints[0].Conversation)
	taken := env.Records("checkpoint.taken")
	assert.Equal(t, "a2/k3", taken[len(taken)-1]["source"])
	reg := env.Records("agent.registered")
	assert.Equal(t, reg[0]["tree"], reg[1]["tree"], "the fork shares the tree")
	assert.Equal(t, "worktree", reg[1]["isolation"])

	assert.True(t, *env.DryRun("--agent=a2", "--checkpoint=k2", "--restore=files", "--outside=overwrite").Guarded, "a sharer makes the source's tree guarded")
	assert.True(t, *env.DryRun("--agent=a7", "--checkpoint=k1", "--restore=files", "--outside=overwrite").Guarded)

	// The latest turn by default.
	env.Venom("checkpoint", "fork", "--agent=a8", "--from=a2", "--json").OK(t).JSON(t, &res)
	assert.Equal(t, "t3", *res.ThroughTurn)
	assert.Equal(t, "k5", *res.Checkpoint)

	env.Venom("checkpoint", "fork", "--agent=a9", "--from=a2", "--through-turn=t9", "--json").Fails(t, 3, "not_found.turn")
	env.Venom("checkpoint", "fork", "--agent=a9", "--from=nobody", "--json").Fails(t, 3, "not_found.agent")
	env.Venom("checkpoint", "fork", "--agent=a7", "--from=a2", "--json").Fails(t, 2, "invalid_params.agent")
	env.Venom("checkpoint", "fork", "--agent=Bad!", "--from=a2", "--json").Fails(t, 2, "invalid_params.agent")
	assert.Len(t, env.Records("agent.registered"), 3, "refusals register nothing")
}

func TestFork_BeforeAnyCheckpoint(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	var res forkResult
	env.Venom("checkpoint", "fork", "--agent=a2", "--from=a1", "--json").OK(t).JSON(t, &res)
	assert.Nil(t, res.ThroughTurn, "a1's turn is still running: no turn has ended")
	require.NotNil(t, res.Checkpoint, "k1 (turn_start, through null) is the fork point")
	assert.Equal(t, "k1", *res.Checkpoint)

	other := NewEnv(t)
	other.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	other.Write("x.txt", "x\n")
	other.Venom("checkpoint", "--agent=a1", "--json").OK(t) // k2, mid-turn
	other.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	// turn_end reused k2, which is mid-turn: t1 has no fork point.
	other.Venom("checkpoint", "fork", "--agent=a2", "--from=a1", "--through-turn=t1", "--json").OK(t).JSON(t, &res)
	assert.Nil(t, res.Checkpoint)
	assert.Nil(t, res.ForkCheckpoint)
	assert.Empty(t, other.VenomRefs()[2:], "a2 has no ref")
	other.Turn("a1", func() { other.Write("x.txt", "y\n") })
	other.Venom("checkpoint", "fork", "--agent=a3", "--from=a1", "--json").OK(t).JSON(t, &res)
	assert.Equal(t, "t2", *res.ThroughTurn)
	assert.Equal(t, "k3", *res.Checkpoint, "t2's turn_start reused k2; its turn_end is k3")
}
