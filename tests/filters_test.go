package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Filters that name nothing are refused, not taken as
// "everything" or "nothing". A mistyped event type printed nothing and
// exited 0 (with --follow it waited forever); --before a checkpoint the
// agent never had, and --limit 0 or below, listed everything.
func TestFilters_RefuseNonsense(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for i := 0; i < 3; i++ {
		env.Write("f.txt", string(rune('a'+i))+"\n")
		env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	}

	r := env.Venom("checkpoint", "events", "--types=agent.chekpoint", "--json").Fails(t, 2, "invalid_params.filter")
	assert.Contains(t, r.Stdout, "agent.checkpoint", "the error lists the types there are")
	venomWithin(t, env, 30*time.Second, "checkpoint", "events", "--follow", "--types=foo.*", "--json").
		Fails(t, 2, "invalid_params.filter")
	for _, ok := range []string{"agent.checkpoint", "agent.*", "*", "agent.checkpoint,agent.rollback_ended"} {
		out := env.Venom("checkpoint", "events", "--types="+ok, "--json").OK(t).Stdout
		assert.Contains(t, out, `"agent.checkpoint"`, "--types=%s", ok)
	}

	env.Venom("checkpoint", "list", "--agent=a1", "--before=k99", "--json").Fails(t, 3, "not_found.checkpoint")
	for _, bad := range []string{"0", "-1"} {
		env.Venom("checkpoint", "list", "--agent=a1", "--limit="+bad, "--json").Fails(t, 2, "invalid_params.usage")
	}
	var l struct {
		Checkpoints []struct {
			Checkpoint string `json:"checkpoint"`
		} `json:"checkpoints"`
	}
	env.Venom("checkpoint", "list", "--agent=a1", "--limit=1", "--json").OK(t).JSON(t, &l)
	require.Len(t, l.Checkpoints, 1)
	assert.Equal(t, "k3", l.Checkpoints[0].Checkpoint)
	env.Venom("checkpoint", "list", "--agent=a1", "--before=k3", "--json").OK(t).JSON(t, &l)
	require.Len(t, l.Checkpoints, 2)
}
