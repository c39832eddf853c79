package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFirstCheckpoint_SaysTheAgentIsRegistered: the capture that
// registers an agent says so, once; later captures print only their
// id, and a cleaned agent's id registered again says that too.
func TestFirstCheckpoint_SaysTheAgentIsRegistered(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	first := env.Venom("checkpoint", "--agent=a1").OK(t)
	assert.Equal(t, "Checkpoint a1/k1\nAgent a1 is registered now.\n", first.Stdout)
	env.Write("a.txt", "x\n")
	assert.Equal(t, "Checkpoint a1/k2\n", env.Venom("checkpoint").OK(t).Stdout)
	assert.Empty(t, env.Venom("checkpoint", "--agent=b1", "-q").OK(t).Stdout, "-q: nothing")
	env.Venom("checkpoint", "clean", "--agent=b1").OK(t)
	env.Write("a.txt", "y\n")
	again := env.Venom("checkpoint", "--agent=b1").OK(t)
	assert.Contains(t, again.Stdout, "Agent b1 is registered again (it was cleaned).\n")
	// The log agrees: one registration for a1, two for b1.
	n := map[string]int{}
	for _, r := range env.LogRecords() {
		if r["type"] == "agent.registered" {
			n[r["agent"].(string)]++
		}
	}
	assert.Equal(t, map[string]int{"a1": 1, "b1": 2}, n)
}

// TestRollback_PlanHeadersOneWording: a rollback's plan in a shared
// (guarded) tree and a revert's plan say what stays in the same words,
// with no word ("Guarded tree") a newcomer has not met.
func TestRollback_PlanHeadersOneWording(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "base\n")
	env.Commit("base")
	env.Turn("a1", func() { env.Write("a.txt", "turn\n") })
	const stays = "HEAD, the branch and the index stay as they are"
	roll := env.Venom("rollback", "--agent=a1", "k1", "--dry-run").OK(t).Stdout
	revert := env.Venom("rollback", "--agent=a1", "--revert=t1", "--dry-run").OK(t).Stdout
	for what, out := range map[string]string{"rollback": roll, "revert": revert} {
		assert.Contains(t, out, stays, what)
		assert.NotContains(t, strings.ToLower(out), "guarded", what)
	}
	assert.Contains(t, roll, stays+": the tree is shared.\n")
}

// TestRollback_PipedOutputAtATerminalSaysWhy: at a terminal with the
// output piped (| head), the rollback cannot show the plan it would ask
// to confirm: it says so and prints the dry run to run instead, which
// works as printed. Nothing changes.
func TestRollback_PipedOutputAtATerminalSaysWhy(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "base\n")
	env.Commit("base")
	env.Turn("a1", func() { env.Write("a.txt", "turn\n") })
	snap := env.Snapshot()
	screen, code := env.ptyRunLine(t, nil, `bash -c 'git venom-rollback k1 | head -3; echo "exit ${PIPESTATUS[0]}"'`)
	screen = ansiEscape.ReplaceAllString(strings.ReplaceAll(screen, "\r", ""), "")
	assert.Equal(t, 0, code, screen)
	fitsEighty(t, "piped", screen)
	assert.Contains(t, screen, "error: invalid_params.plan: stdout is not a terminal: the plan cannot be shown\n")
	assert.Contains(t, screen, "\nhint: git venom-rollback k1 --dry-run\n")
	assert.Contains(t, screen, "exit 2\n")
	assert.NotContains(t, screen, "exactly one of")
	env.AssertUntouched(t, snap)
	assert.Equal(t, "turn\n", env.Read("a.txt"))
	// The hint runs as printed, and its plan too.
	dry := env.Venom("rollback", "k1", "--dry-run").OK(t).Stdout
	m := regexp.MustCompile(`(?m)^  git venom-rollback (k1 --plan=p1-[0-9a-f]{16})$`).FindStringSubmatch(dry)
	require.NotNil(t, m, dry)
	env.Venom("rollback", strings.Fields(m[1])...).OK(t)
	assert.Equal(t, "base\n", env.Read("a.txt"))
}

// TestRollback_OutputToAFileAtATerminalSaysWhy: at a terminal with the
// output redirected to a file, the refusal said "stdout is piped" and
// "without the pipe it asks": there is no pipe. Its words are true of a
// file and of a pipe; the file holds nothing, and nothing changes.
func TestRollback_OutputToAFileAtATerminalSaysWhy(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "base\n")
	env.Commit("base")
	env.Turn("a1", func() { env.Write("a.txt", "turn\n") })
	snap := env.Snapshot()
	out := filepath.Join(t.TempDir(), "out.txt")
	screen, code := env.ptyRunLine(t, nil, `git venom-rollback --agent=a1 k1 > `+out+`; echo "exit $?"`)
	screen = ansiEscape.ReplaceAllString(strings.ReplaceAll(screen, "\r", ""), "")
	assert.Equal(t, 0, code, screen)
	fitsEighty(t, "to a file", screen)
	assert.Contains(t, screen, "error: invalid_params.plan: stdout is not a terminal: the plan cannot be shown\n")
	assert.NotContains(t, screen, "pipe", screen)
	assert.Contains(t, screen, "\nhint: git venom-rollback --agent=a1 k1 --dry-run\n")
	assert.Contains(t, screen, "exit 2\n")
	written, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Empty(t, string(written))
	env.AssertUntouched(t, snap)
	assert.Equal(t, "turn\n", env.Read("a.txt"))
}
