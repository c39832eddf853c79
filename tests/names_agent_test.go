package tests

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The output names a checkpoint with its agent ("Checkpoint a1/k2"), and
// that name is taken back wherever a checkpoint is named: <agent>/k<n>,
// /t<n>, /last~<n> and /<label>, as --agent=<agent> with the bare name.
func TestNames_AgentQualified(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "0\n")
	env.Checkpoint("--agent=a2")                         // a2/k1: a second agent, so every bare name needs --agent
	env.Turn("a1", func() { env.Write("a.txt", "1\n") }) // a1/k1, k2: t1
	// t2 starts from k2 (nothing changed: reused, labelled) and ends at k3.
	env.Turn("a1", func() { env.Write("b.txt", "2\n") }, "--label=feature/x")
	require.Contains(t, env.Venom("checkpoint", "list", "--agent=a1").OK(t).Stdout, "feature/x")

	same := func(qualified, bare []string, cmd string) {
		t.Helper()
		q := env.Venom(cmd, qualified...).OK(t)
		b := env.Venom(cmd, bare...).OK(t)
		assert.Equal(t, b.Stdout, q.Stdout, "%v against %v", qualified, bare)
	}
	same([]string{"a1/k1", "a1/k2", "--name-only"}, []string{"--agent=a1", "k1", "k2", "--name-only"}, "diff")
	same([]string{"a1/k1", "k3", "--json"}, []string{"--agent=a1", "k1", "k3", "--json"}, "diff")
	same([]string{"--from=a1/t1", "--to=a1/last", "--json"}, []string{"--agent=a1", "--from=t1", "--to=last", "--json"}, "diff")
	same([]string{"a1/k1", "--dry-run", "--json"}, []string{"--agent=a1", "k1", "--dry-run", "--json"}, "rollback")
	same([]string{"--checkpoint=a1/feature/x", "--dry-run", "--json"}, []string{"--agent=a1", "feature/x", "--dry-run", "--json"}, "rollback")
	same([]string{"--revert=a1/t1", "--dry-run", "--json"}, []string{"--agent=a1", "--revert=t1", "--dry-run", "--json"}, "rollback")
	same([]string{"--revert=a1/k1..a1/k2", "--dry-run", "--json"}, []string{"--agent=a1", "--revert=k1..k2", "--dry-run", "--json"}, "rollback")
	same([]string{"--revert=a1/k1..k2", "--dry-run", "--json"}, []string{"--agent=a1", "--revert=k1..k2", "--dry-run", "--json"}, "rollback")
	same([]string{"list", "--before=a1/k3", "--json"}, []string{"list", "--agent=a1", "--before=k3", "--json"}, "checkpoint")
	// VENOM_AGENT names a default, which a name with its agent overrides,
	// as it overrides it for a fetched copy.
	r := env.VenomIn(env.Dir, []string{"VENOM_AGENT=a2"}, "diff", "a1/k1", "a1/k2", "--name-only").OK(t)
	assert.Equal(t, "a.txt\n", r.Stdout)

	// --agent that says otherwise is refused, as for a fetched copy.
	r = env.Venom("rollback", "a1/k1", "--agent=a2", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Contains(t, r.Stderr, "error: invalid_params.usage: a1/k1 is a checkpoint of a1, not of --agent=a2\n")
	env.Venom("diff", "--agent=a2", "a1/k1").Fails(t, 2, "invalid_params.usage")
	env.Venom("checkpoint", "list", "--agent=a2", "--before=a1/k2").Fails(t, 2, "invalid_params.usage")
	r = env.Venom("diff", "a1/k1", "a2/k1").Fails(t, 2, "invalid_params.usage")
	assert.Contains(t, r.Stderr, "are two agents' checkpoints")
	env.Venom("rollback", "--revert=a1/k1..a2/k1", "--dry-run").Fails(t, 2, "invalid_params.usage")
	// A first part that is no agent here leaves the name as it was.
	env.Venom("diff", "--agent=a1", "zz/k1").Fails(t, 2, "invalid_params.checkpoint")

	// The real call, by the plan of the qualified dry run; checked with git.
	dry := env.Venom("rollback", "a1/k2", "--restore=files", "--dry-run").OK(t).Stdout
	plan := regexp.MustCompile(`--plan=p1-[0-9a-f]{16}`).FindString(dry)
	require.NotEmpty(t, plan, dry)
	env.Venom("rollback", "a1/k2", "--restore=files", plan).OK(t)
	assert.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a1/2:a.txt"), env.Git("hash-object", "a.txt"))
	assert.Equal(t, "1\n", env.Read("a.txt"))
	assert.NoFileExists(t, env.Path("b.txt"))
}
