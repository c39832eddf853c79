package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A checkpoint whose ref was deleted can be neither diffed nor rolled back
// to (docs/checkpoints.md#the-log). As git ignores a broken ref with a warning, list leaves it
// out and says so on stderr; git venom-diff names the gone ref; doctor
// fails until a prune records it as gone.
func TestLostRef_ListHidesItDiffNamesItDoctorFails(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1) // k1 turn_start, k2 turn_end
	env.TurnN("a1", 2) // k3 (k3 reused as turn_start), k4
	env.Git("update-ref", "-d", "refs/venom/checkpoints/a1/2")

	l := env.Venom("checkpoint", "list", "--json").OK(t)
	var listing ListResult
	l.JSON(t, &listing)
	var shown []string
	for _, it := range listing.Checkpoints {
		shown = append(shown, it.Checkpoint)
	}
	assert.NotContains(t, shown, "k2")
	assert.Contains(t, shown, "k1")
	assert.Contains(t, l.Stderr, "warning: ignoring a1/k2: its ref is gone")

	h := env.Venom("checkpoint", "list").OK(t)
	for _, line := range strings.Split(h.Stdout, "\n") {
		assert.NotRegexp(t, `^k2\s`, line)
	}
	assert.Contains(t, h.Stderr, "a1/k2")

	d := env.Venom("diff", "k2").Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, d.Stderr, "its ref refs/venom/checkpoints/a1/2 is gone")

	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").Fails(t, 1, "").JSON(t, &rep)
	assert.False(t, rep.OK)
	assert.Equal(t, "fail", rep.status()["checkpoints.refs"])
	msg, fix := rep.check(t, "checkpoints.refs")
	assert.Contains(t, msg, "a1/k2")
	require.Equal(t, "git venom-checkpoint prune --agent=a1", fix)

	// The fix: a prune records k2 as gone; doctor is green and the list
	// warns no more. The other refs are untouched, checked with git.
	before := env.Git("for-each-ref", "refs/venom/")
	env.Venom("checkpoint", "prune", "--agent=a1").OK(t)
	assert.Equal(t, before, env.Git("for-each-ref", "refs/venom/"))
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.True(t, rep.OK)
	assert.Empty(t, env.Venom("checkpoint", "list").OK(t).Stderr)
	pruned := env.Records("checkpoint.pruned")
	require.Len(t, pruned, 1)
	assert.Equal(t, []any{"k2"}, pruned[0]["checkpoints"])
}
