package tests

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// swapEnv: in a guarded tree, the agent's turn deletes the file swap; a
// person then makes the folder swap/ with swap/inner.txt, and edits
// README.md. Going back to k1 must restore the file swap over the person's
// folder: the file side of the swap is bound to the outside path.
func swapEnv(t *testing.T) *Env {
	env := NewEnv(t)
	env.Write("swap", "a file\n")
	env.Commit("swap is a file")
	env.Checkpoint("--agent=a1", "--reason=turn_start") // k1
	env.Remove("swap")
	env.Checkpoint("--agent=a1", "--reason=turn_end") // k2
	env.Write("swap/inner.txt", "a person's folder\n")
	env.Write("README.md", "a person's edit\n")
	return env
}

// A dry run refused for outside edits names every path in its human
// output, and its data holds the file side of a file<->folder swap (issue
// 14 item 7).
func TestPlan_OutsideRefusalNamesEveryPathAndTheSwapsFileSide(t *testing.T) {
	t.Parallel()
	env := swapEnv(t)
	m := env.Venom("rollback", "k1", "--dry-run", "--json").Fails(t, 5, "conflict.outside_edits").Map(t)
	data := m["error"].(map[string]any)["data"].(map[string]any)
	assert.Equal(t, []any{map[string]any{"repo": ".", "paths": []any{"README.md", "swap", "swap/inner.txt"}}},
		data["repos"])

	r := env.Venom("rollback", "k1", "--dry-run").Fails(t, 5, "conflict.outside_edits")
	assert.Contains(t, r.Stderr, "hint:   README.md: changed outside the agent's turns\n")
	assert.Contains(t, r.Stderr, "hint:   swap/inner.txt: changed outside the agent's turns\n")
	assert.Contains(t, r.Stderr, "hint:   swap: restoring it replaces a folder changed outside the agent's turns\n")

	// A path too long for one 80-column hint line takes the line for
	// itself, its reason below it.
	long := "some/rather/long/folder/name/file-with-a-long-name.txt"
	env.Write(long, "a person's new file\n")
	r = env.Venom("rollback", "k1", "--dry-run").Fails(t, 5, "conflict.outside_edits")
	assert.Contains(t, r.Stderr, "hint:   "+long+":\nhint:     changed outside the agent's turns\n")
	for _, line := range strings.Split(r.Stderr, "\n") {
		assert.LessOrEqual(t, len(line), 80, "%q", line)
	}
	require.NoError(t, os.Remove(env.Path(long)))

	// --outside=keep: the file side stays too, and the plan shows it.
	out := env.Venom("rollback", "k1", "--dry-run", "--outside=keep").OK(t).Stdout
	assert.Contains(t, out, "  swap (outside swap/inner.txt)\n")
	assert.Contains(t, out, "Restores 0 files; 3 left as they are.\n")
}

// The plan's words say what happens, to a person: no "(overwritten)" on a
// deletion, no "your first turn", and the commits a HEAD move drops are
// named as git names them, with counts per class.
func TestPlan_WordingCountsAndDroppedCommits(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Checkpoint("--agent=a1", "--isolation=worktree", "--reason=turn_start") // k1: unguarded
	env.Write("agent.txt", "1\n")
	env.Commit("first: agent.txt")
	env.Write("agent.txt", "2\n")
	second := env.CommitID("second: agent.txt again")
	env.Checkpoint("--agent=a1", "--reason=turn_end") // k2
	env.Write("new.txt", "a person's new file\n")     // outside, overwritten by default

	out := env.Venom("rollback", "k1", "--dry-run").OK(t).Stdout
	assert.Contains(t, out, "Roll a1 back to k1, before the first turn.\n")
	assert.NotContains(t, out, "your first turn")
	assert.Regexp(t, regexp.MustCompile(`(?m)^  delete new\.txt$`), out)
	assert.NotContains(t, out, "(overwritten)")
	assert.Contains(t, out, "dropping 2 commits; the index follows.\n")
	assert.NotContains(t, out, "commit(s)")
	assert.Contains(t, out, "\n  "+second[:7]+" second: agent.txt again\n")
	assert.Regexp(t, regexp.MustCompile(`\n  [0-9a-f]{7} first: agent.txt\n`), out)
	assert.Contains(t, out, "Restores 2 files (writes 0 bytes): 1 changed outside the agent's turns, 1 during its turns.\n")
}

// At a terminal the plan goes through the pager (core.pager, GIT_PAGER,
// PAGER, LESS=FRX), and its counts and the question come after it, on the
// terminal.
func TestPlan_InteractivePlanIsPagedAndCounted(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	env.Extra = []string{`GIT_PAGER=printf 'LESS=%s\n' "$LESS"; sed s/^/PAGED:/`}
	screen, code := env.ptyRun(t, []string{"", "n"}, "rollback", "k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "LESS=FRX")
	assert.Regexp(t, regexp.MustCompile(`PAGED:Roll a1 back to \S*k1\S*, before the first turn`), screen)
	assert.Regexp(t, regexp.MustCompile(`PAGED:.*README\.md`), screen)
	assert.Regexp(t, regexp.MustCompile(`(?m)^Restores 1 file \(writes \d+ bytes\): 1 during its turns; 1 left as it is\.\r?$`), screen)
	assert.Regexp(t, regexp.MustCompile(`(?m)^Plan p1-[0-9a-f]{16}\. Roll back\? \[y/N\]`), screen)
	assert.NotContains(t, screen, "PAGED:Plan p1-")
}

// A plan gone stale while a person read it says what changed before it
// exits conflict.rollback_stale, and nothing is written.
func TestPlan_StaleAtThePromptSaysWhatChanged(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	before := func(i int) {
		if i == 1 { // at [y/N]: the tree changes under the plan
			env.Write("late.txt", "written while the person read\n")
		}
	}
	screen, code := env.ptyRunThen(t, []string{"", "y"}, before, "git venom-rollback k1 --restore=files")
	require.Equal(t, 5, code, screen)
	assert.Contains(t, screen, "Changed while the plan was shown:")
	assert.Regexp(t, regexp.MustCompile(`Changed while the plan was shown:\S*\r?\n  \S*late\.txt`), screen)
	assert.Contains(t, screen, "conflict.rollback_stale")
	assert.Empty(t, env.Records("rollback.started"))
	assert.Equal(t, "agent\n", env.Read("agent.txt"))
	assert.False(t, strings.Contains(screen, "Rolled back"), screen)
}

// One screen writes a count one way. The plan's summary
// said "Restores 1,200 files" and the result line "1200 files".
func TestRollback_CountsReadTheSameEverywhere(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1") // k1
	for i := 0; i < 1200; i++ {
		env.Write(fmt.Sprintf("gen/f%04d.txt", i), "x\n")
	}
	dry := env.Venom("rollback", "--agent=a1", "k1", "--dry-run").OK(t).Stdout
	assert.Contains(t, dry, "Restores 1,200 files")
	plan := env.DryRun("--agent=a1", "k1").Plan
	out := env.Venom("rollback", "--agent=a1", "k1", "--plan="+plan).OK(t).Stdout
	assert.Contains(t, out, "· 1,200 files ·")
	assert.NotRegexp(t, `\d{4} files`, dry+out)
}
