package checkpoints

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
)

// k1..k4, k3 pruned; turn t1 ended at k2, t2 still running.
func resolveAgent() *agents.Agent {
	return &agents.Agent{ID: "a1",
		Checkpoints: []*agents.Checkpoint{ck("k1", false), ck("k2", false), ck("k3", true), ck("k4", false)},
		Turns:       []*agents.Turn{{ID: "t1", EndCheckpoint: "k2"}, {ID: "t2"}}}
}

func ck(id string, pruned bool) *agents.Checkpoint {
	c := &agents.Checkpoint{Pruned: pruned}
	c.Checkpoint = id
	return c
}

func TestResolve_Shorthands(t *testing.T) {
	a := resolveAgent()
	for name, want := range map[string]string{"k3": "k3", "last": "k4", "~0": "k4", "~1": "k2", "~2": "k1", "t1": "k2"} {
		got, err := Resolve(a, name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, "%s (a pruned checkpoint is not counted)", name)
	}
}

func TestResolve_Refusals(t *testing.T) {
	a := resolveAgent()
	for name, code := range map[string]errcode.Code{
		"~3": errcode.NotFoundCheckpoint, "t2": errcode.NotFoundCheckpoint, "t9": errcode.NotFoundCheckpoint,
		"k0": errcode.InvalidParamsCheckpoint, "head": errcode.InvalidParamsCheckpoint, "~-1": errcode.InvalidParamsCheckpoint,
	} {
		_, err := Resolve(a, name)
		require.Error(t, err, name)
		assert.True(t, errcode.Is(err, code), "%s: %v", name, err)
	}
	_, err := Resolve(&agents.Agent{ID: "empty"}, "last")
	assert.True(t, errcode.Is(err, errcode.NotFoundCheckpoint))
}
