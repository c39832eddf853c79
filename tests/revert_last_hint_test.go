package tests

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRevert_OfTheLastCheckpointHintsWhatItChanged: --revert of one
// checkpoint is refused with a hint that takes back what changed since
// it, to the last. Of the last checkpoint itself (named last, or by a
// label on it), the hint takes back what that checkpoint changed and runs
// as printed, not a pair of the last twice that reverts 0 files; a pair of
// one checkpoint twice (git revert A..A refuses too) gets that hint.
func TestRevert_OfTheLastCheckpointHintsWhatItChanged(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Checkpoint("--agent=a1", "--label=first") // k1
	env.Write("a.txt", "two\n")
	env.Checkpoint("--agent=a1", "--label=newest") // k2

	for _, c := range []struct{ revert, hint string }{
		{"last", "git venom-rollback --revert=k1..k2 --dry-run"},
		{"last~0", "git venom-rollback --revert=k1..k2 --dry-run"},
		{"k2", "git venom-rollback --revert=k1..k2 --dry-run"},
		{"newest", "git venom-rollback --revert=k1..k2 --dry-run"},
		{"k2..last", "git venom-rollback --revert=k1..k2 --dry-run"},
		{"newest..k2", "git venom-rollback --revert=k1..k2 --dry-run"},
		// Not the last: what changed since it, as before.
		{"first", "git venom-rollback --revert=k1..last --dry-run"},
	} {
		r := env.Venom("rollback", "--revert="+c.revert, "--dry-run").Fails(t, 2, "invalid_params.usage")
		fitsEighty(t, c.revert, r.Stderr)
		require.Equal(t, []string{c.hint}, hintCommands(r.Stderr), "--revert=%s:\n%s", c.revert, r.Stderr)
		sh := exec.Command("sh", "-c", c.hint)
		sh.Dir, sh.Env = env.Dir, env.Environ()
		out, err := sh.CombinedOutput()
		require.NoError(t, err, "%s: %s", c.hint, out)
		assert.Contains(t, string(out), "modify a.txt", "%s takes back nothing:\n%s", c.hint, out)
	}
	// The first checkpoint changed nothing a pair can name.
	env.Git("update-ref", "-d", "refs/venom/checkpoints/a1/1")
	env.Venom("checkpoint", "prune", "--agent=a1").OK(t)
	r := env.Venom("rollback", "--revert=k2..k2", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Empty(t, hintCommands(r.Stderr), r.Stderr)
}

// TestRevert_OfAnAgentsOnlyCheckpointHintsNothing: --revert=last of an
// agent with one checkpoint was refused with the hint --revert=last~1..last,
// and --revert=k1 with --revert=k1..last, both printed before the agent
// was read: the first is not found (nothing is before the first
// checkpoint), the second names k1 twice. Every printed hint must run as
// printed; the first checkpoint has no pair to name, so none is hinted.
// An agent that does not exist is refused the same way, with no hint.
func TestRevert_OfAnAgentsOnlyCheckpointHintsNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Checkpoint("--agent=a1", "--label=only") // k1
	env.Write("a.txt", "two\n")

	for _, revert := range []string{"last", "last~0", "only", "k1", "k1..k1"} {
		r := env.Venom("rollback", "--agent=a1", "--revert="+revert, "--dry-run").Fails(t, 2, "invalid_params.usage")
		fitsEighty(t, revert, r.Stderr)
		for _, hint := range hintCommands(r.Stderr) {
			sh := exec.Command("sh", "-c", hint)
			sh.Dir, sh.Env = env.Dir, env.Environ()
			out, err := sh.CombinedOutput()
			assert.NoError(t, err, "--revert=%s hints %s, which fails:\n%s", revert, hint, out)
		}
	}
	r := env.Venom("rollback", "--agent=a1", "--revert=last", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Empty(t, hintCommands(r.Stderr), r.Stderr)
	assert.Contains(t, r.Stderr, "a1/k1", r.Stderr)
	// Nothing was taken back or written.
	assert.Equal(t, "two\n", env.Read("a.txt"))
	assert.Equal(t, "refs/venom/checkpoints/a1/1", env.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/"))
	r = env.Venom("rollback", "--agent=nobody", "--revert=last", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Empty(t, hintCommands(r.Stderr), r.Stderr)
	r = env.Venom("rollback", "--agent=a1", "--revert=k9", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Empty(t, hintCommands(r.Stderr), r.Stderr)
}
