package rollbackcmd

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/checkpointcmd"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/clitest"
)

// In-process command tests: git venom-rollback through cli.Run with test
// streams, piped and at a test terminal, on real repositories (lib/clitest).
// Results are checked with git and the files themselves.

// turned is a repository where agent a1 ran one turn: it changed a.txt
// and added b.txt, between k1 (turn_start) and k2 (turn_end).
func turned(t *testing.T) *clitest.World {
	t.Helper()
	w := clitest.New(t)
	checkpoint(w, "--agent=a1", "--reason=turn_start")
	w.Write("a.txt", "by the agent\n")
	w.Write("b.txt", "new\n")
	checkpoint(w, "--agent=a1", "--reason=turn_end")
	return w
}

func checkpoint(w *clitest.World, args ...string) {
	r := w.Run("git-venom-checkpoint", checkpointcmd.New(), args...)
	if r.Code != 0 {
		panic("checkpoint " + r.Err)
	}
}

func venomRollback(w *clitest.World, args ...string) clitest.Result {
	return w.Run("git-venom-rollback", New(), args...)
}

func TestRollback_DryRunThenPlanRestoresTheFiles(t *testing.T) {
	w := turned(t)
	head := w.Git("rev-parse", "HEAD")

	dry := venomRollback(w, "k1", "--dry-run", "--json")
	require.Equal(t, 0, dry.Code, dry.Out+dry.Err)
	var p struct {
		Plan   string `json:"plan"`
		DryRun bool   `json:"dry_run"`
	}
	require.NoError(t, json.Unmarshal([]byte(dry.Out), &p), dry.Out)
	require.NotEmpty(t, p.Plan)
	assert.True(t, p.DryRun)
	assert.Equal(t, "by the agent\n", w.Read("a.txt"), "a dry run wrote a file")
	assert.Equal(t, "?? b.txt", w.Git("status", "--porcelain", "--", "b.txt"))

	real := venomRollback(w, "k1", "--plan="+p.Plan, "--json")
	require.Equal(t, 0, real.Code, real.Out+real.Err)
	assert.Equal(t, "a\n", w.Read("a.txt"))
	assert.Empty(t, w.Git("status", "--porcelain"), "the tree is k1's again, as git sees it")
	assert.Equal(t, head, w.Git("rev-parse", "HEAD"))
	// The safety checkpoint holds what the rollback replaced.
	assert.Equal(t, "by the agent", w.Git("show", "refs/venom/checkpoints/a1/3:a.txt"))
}

func TestRollback_HumanDryRunNamesThePlanToQuote(t *testing.T) {
	w := turned(t)
	r := venomRollback(w, "k1", "--dry-run")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Contains(t, r.Out, "Roll a1 back to k1")
	assert.Contains(t, r.Out, "a.txt")
	assert.Contains(t, r.Out, "b.txt")
	assert.NotContains(t, r.Out, "\x1b[", "no colour on a pipe")
	m := regexp.MustCompile(`To run it:\n  git venom-rollback k1 --plan=(\S+)\n`).FindStringSubmatch(r.Out)
	require.NotNil(t, m, r.Out)

	real := venomRollback(w, "k1", "--plan="+m[1])
	require.Equal(t, 0, real.Code, real.Err)
	assert.Equal(t, "a\n", w.Read("a.txt"))
}

// Piped, a rollback without --dry-run or --plan is refused before it
// reads anything: nothing changes.
func TestRollback_NeitherDryRunNorPlanRefusedOffATerminal(t *testing.T) {
	w := turned(t)
	r := venomRollback(w, "k1")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Err, "error: invalid_params.plan: give exactly one of --dry-run and --plan")
	assert.Equal(t, "by the agent\n", w.Read("a.txt"))

	r = venomRollback(w, "k1", "k2", "--dry-run", "--json")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Out, `"code":"invalid_params.usage"`)
	r = venomRollback(w, "k1", "--checkpoint=k2", "--dry-run")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Err, "the checkpoint is given twice")
}

// At a terminal with neither flag: the plan, the question, and the real
// call only on yes.
func TestRollback_TerminalAsksBeforeRollingBack(t *testing.T) {
	w := turned(t)
	no := w.Terminal("n\n", "git-venom-rollback", New(), "k1")
	require.Equal(t, 0, no.Code, no.Err)
	assert.Contains(t, no.Out, "Roll back? [y/N] ")
	assert.Contains(t, no.Out, "Nothing was changed.")
	assert.Equal(t, "by the agent\n", w.Read("a.txt"))

	eof := w.Terminal("", "git-venom-rollback", New(), "k1")
	assert.Equal(t, cli.AbortCode, eof.Code, "end of input ends the dialogue")
	assert.Equal(t, "by the agent\n", w.Read("a.txt"))

	yes := w.Terminal("y\n", "git-venom-rollback", New(), "k1")
	require.Equal(t, 0, yes.Code, yes.Err)
	assert.Equal(t, "a\n", w.Read("a.txt"))
	assert.Empty(t, w.Git("status", "--porcelain"))
}

// A person's edit outside the agent's turns is offered keep or overwrite;
// keep (the default, an empty answer) leaves it.
func TestRollback_TerminalKeepsOutsideEditsByDefault(t *testing.T) {
	w := turned(t)
	w.Write("a.txt", "by a person\n")
	r := w.Terminal("\ny\n", "git-venom-rollback", New(), "k1", "--outside=refuse")
	require.Equal(t, 0, r.Code, r.Out+r.Err)
	assert.Contains(t, r.Out, "Keep them as they are, or overwrite them? [K/o] ")
	assert.Equal(t, "by a person\n", w.Read("a.txt"), "kept")
	assert.NoFileExists(t, w.Dir+"/b.txt", "the agent's new file went")
}

// At a colour terminal the plan is coloured; --color=never and a pipe
// keep it plain.
func TestRollback_ColouredAtATerminalOnly(t *testing.T) {
	w := turned(t)
	for i, kv := range w.Environ {
		if kv == "TERM=dumb" {
			w.Environ[i] = "TERM=xterm-256color"
		}
	}
	w.Write("a.txt", "by a person\n") // an outside path, shown highlighted
	r := w.Terminal("", "git-venom-rollback", New(), "k1", "--dry-run", "--outside=keep")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Contains(t, r.Out, "\x1b[", "coloured at a terminal")
	r = w.Terminal("", "git-venom-rollback", New(), "k1", "--dry-run", "--outside=keep", "--color=never")
	require.Equal(t, 0, r.Code, r.Err)
	assert.NotContains(t, r.Out, "\x1b[")
	r = venomRollback(w, "k1", "--dry-run", "--outside=keep")
	require.Equal(t, 0, r.Code, r.Err)
	assert.NotContains(t, r.Out, "\x1b[", "plain on a pipe")
}

// TestRollingBack_Revert: a revert's progress counts say what it does,
// as an undo's do, not "Rolling back:".
func TestRollingBack_Revert(t *testing.T) {
	assert.Equal(t, "Reverting:", rollingBack("Reverting t3…"))
	assert.Equal(t, "Undoing:", rollingBack("Undoing the last rollback…"))
	assert.Equal(t, "Rolling back:", rollingBack("Rolling back to k1…"))
}
