package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrune_KilledBeforeItsRecordsDoctorSaysPrune: a prune killed
// (SIGKILL) after it deleted its refs and before it logged them pruned
// leaves logged checkpoints without refs. doctor fails on them, and its
// fix, run as printed, is a prune that records them: doctor is then
// clean, and list and the refs agree.
func TestPrune_KilledBeforeItsRecordsDoctorSaysPrune(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for i := 1; i <= 4; i++ {
		env.TurnN("a1", i)
	}
	cmd := env.StartPaused("prune-refs-deleted", nil, "checkpoint", "prune", "--agent=a1", "--keep=1", "--json")
	Kill9(t, cmd)
	require.Empty(t, env.Records("checkpoint.pruned"))

	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").Fails(t, 1, "").JSON(t, &rep)
	assert.Equal(t, "fail", rep.status()["checkpoints.refs"])
	msg, fix := rep.check(t, "checkpoints.refs")
	assert.Contains(t, msg, "lost their ref")
	require.Equal(t, "git venom-checkpoint prune --agent=a1", fix)
	env.Git(strings.Fields(fix)[1:]...)
	require.NotEmpty(t, env.Records("checkpoint.pruned"))

	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.True(t, rep.OK, "%+v", rep.Checks)
	env.assertRefsLogged(t)
}
