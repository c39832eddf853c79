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
// label on it) that pair was the last twice, which took back nothing: its
// dry run printed "Reverts 0 files" and a plan to run, as did any pair of
// one checkpoint twice (git revert A..A refuses an empty set). The hint
// now takes back what the last checkpoint changed, and runs as printed;
// a pair of one checkpoint twice is refused with that hint.
func TestRevert_OfTheLastCheckpointHintsWhatItChanged(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Checkpoint("--agent=a1", "--label=first") // k1
	env.Write("a.txt", "two\n")
	env.Checkpoint("--agent=a1", "--label=newest") // k2

	for _, c := range []struct{ revert, hint string }{
		{"last", "git venom-rollback '--revert=last~1..last' --dry-run"},
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
