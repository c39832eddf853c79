package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The JSON of agents, prune and clean, dry runs included, pinned
// as documented in the man page: a count is never
// called "checkpoints", arrays are present when empty, and a dry run says
// so in dry_run.
func TestOutput_MaintenanceJSONGolden(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.keep", "1")
	for n := 1; n <= 3; n++ {
		env.TurnN("a1", n)
	}
	env.Git("config", "--global", "venom.keep", "10") // the turns above pruned as they went
	for n := 4; n <= 5; n++ {
		env.TurnN("a1", n)
	}
	env.Git("config", "--global", "venom.keep", "1")

	env.Golden(t, "checkpoint_agents", env.Venom("checkpoint", "agents", "--json").OK(t).Stdout)
	env.Golden(t, "checkpoint_prune_dry_run", env.Venom("checkpoint", "prune", "--dry-run", "--json").OK(t).Stdout)
	env.Golden(t, "checkpoint_prune", env.Venom("checkpoint", "prune", "--json").OK(t).Stdout)
	env.Golden(t, "checkpoint_clean_dry_run", env.Venom("checkpoint", "clean", "--agent=a1", "--dry-run", "--json").OK(t).Stdout)
	env.Golden(t, "checkpoint_clean", env.Venom("checkpoint", "clean", "--agent=a1", "--json").OK(t).Stdout)
}

// prune --dry-run and clean --dry-run name what the real call does and
// change nothing: no ref (plain git), no log record, no archive.
func TestPruneAndClean_DryRunChangesNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.keep", "10")
	for n := 1; n <= 4; n++ {
		env.TurnN("a1", n)
	}
	env.SetGlobal("venom.keep", "2")
	refs, records := env.CheckpointRefs("a1"), len(env.LogRecords())
	require.Len(t, refs, 5)

	var dry struct {
		DryRun      bool `json:"dry_run"`
		Checkpoints []struct {
			Agent  string   `json:"agent"`
			Pruned []string `json:"pruned"`
		} `json:"checkpoints"`
	}
	env.Venom("checkpoint", "prune", "--dry-run", "--json").OK(t).JSON(t, &dry)
	require.True(t, dry.DryRun)
	require.Len(t, dry.Checkpoints, 1)
	assert.Equal(t, []string{"k1", "k2", "k3"}, dry.Checkpoints[0].Pruned)
	assert.Equal(t, refs, env.CheckpointRefs("a1"), "a dry run deleted a ref")
	assert.Len(t, env.LogRecords(), records, "a dry run logged")
	out := env.Venom("checkpoint", "prune", "--dry-run").OK(t).Stdout
	assert.Contains(t, out, "Would prune a1: k1, k2, k3")

	var real struct {
		DryRun      bool `json:"dry_run"`
		Checkpoints []struct {
			Pruned []string `json:"pruned"`
		} `json:"checkpoints"`
	}
	env.Venom("checkpoint", "prune", "--json").OK(t).JSON(t, &real)
	assert.False(t, real.DryRun)
	assert.Equal(t, dry.Checkpoints[0].Pruned, real.Checkpoints[0].Pruned, "the real prune did what the dry run said")
	assert.Equal(t, refsOf("k4", "k5"), env.CheckpointRefs("a1"))

	refs, records = env.CheckpointRefs("a1"), len(env.LogRecords())
	m := env.Venom("checkpoint", "clean", "--agent=a1", "--dry-run", "--json").OK(t).Map(t)
	assert.Equal(t, true, m["dry_run"])
	line := m["checkpoints"].([]any)[0].(map[string]any)
	assert.Equal(t, float64(2), line["removed"])
	assert.Equal(t, float64(0), line["kept"])
	assert.Equal(t, refs, env.CheckpointRefs("a1"))
	assert.Len(t, env.LogRecords(), records)
	agents := env.Venom("checkpoint", "agents", "--json").OK(t).Map(t)["agents"].([]any)
	assert.Equal(t, "settled", agents[0].(map[string]any)["state"], "a dry run archived")
	assert.Contains(t, env.Venom("checkpoint", "clean", "--agent=a1", "--dry-run").OK(t).Stdout,
		"Would archive a1.\na1: would remove 2 checkpoints, keep 0.")

	env.Venom("checkpoint", "clean", "--agent=a1", "--json").OK(t)
	assert.Empty(t, env.CheckpointRefs("a1"))
}
