package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A turn_start while a turn is open closes that turn first, with no
// turn_end checkpoint, and says so: on stderr, in the log (no_end) and in
// the event (it was silent, and the event looked like a normal end).
func TestTurn_SecondTurnStartClosesTheOpenTurnAndSaysSo(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start").OK(t) // k1, t1
	env.Write("half.txt", "the turn stopped here\n")
	r := env.Venom("checkpoint", "--reason=turn_start").OK(t) // k2, t2
	assert.Equal(t, "Checkpoint a1/k2\n", r.Stdout)
	assert.Contains(t, r.Stderr, "note: turn a1/t1 never reported its end: this turn_start closed it,")
	assert.Contains(t, r.Stderr, "turn_end checkpoint; what changed after its last checkpoint counts as outside")
	for _, l := range strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n") {
		assert.LessOrEqual(t, len(l), 80, l)
	}

	ended := env.Records("turn.ended")
	require.Len(t, ended, 1)
	assert.Equal(t, "t1", ended[0]["turn"])
	assert.Equal(t, true, ended[0]["no_end"])
	started := env.Records("turn.started")
	require.Len(t, started, 2)
	assert.Equal(t, "t2", started[1]["turn"])
	assert.Equal(t, "refs/venom/checkpoints/a1/1\nrefs/venom/checkpoints/a1/2",
		env.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/a1/"))

	ev := env.Venom("checkpoint", "events", "--types=agent.turn_ended", "--json").OK(t).Stdout
	assert.Contains(t, ev, `"no_end":true`)
	human := env.Venom("checkpoint", "events", "--types=agent.turn_ended").OK(t).Stdout
	assert.Contains(t, human, "a1/t1 (no turn_end: closed by the next turn_start)")

	// t1 has no end to name; a turn that ended normally has no no_end.
	env.Venom("rollback", "t1", "--dry-run").Fails(t, 3, "not_found.checkpoint")
	r = env.Venom("checkpoint", "--reason=turn_end").OK(t)
	assert.NotContains(t, r.Stderr, "note:")
	ended = env.Records("turn.ended")
	require.Len(t, ended, 2)
	assert.Nil(t, ended[1]["no_end"])
}
