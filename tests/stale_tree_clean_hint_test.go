package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorktree_StaleAgentsCleanHintSaysItRemoves: the refusal of an agent
// whose linked worktree was moved or deleted offers clean to archive it.
// clean removes the agent's checkpoints, which for a deleted worktree
// hold the only copy of its files: the hint must say so, never that they
// stay. Run as printed, clean leaves no ref of the agent (plain git).
func TestWorktree_StaleAgentsCleanHintSaysItRemoves(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"moved", "rm -rf"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			w := env.InWorktree(t, "wt", "side")
			w.Write("w.txt", "b1's work, never committed\n")
			env.VenomIn(w.Dir, nil, "checkpoint", "--agent=b1", "--isolation=worktree", "--json").OK(t)
			if how == "moved" {
				env.Git("worktree", "move", w.Dir, filepath.Join(env.Root, "wt-moved"))
			} else {
				require.NoError(t, os.RemoveAll(w.Dir))
			}
			require.NotEmpty(t, env.Git("for-each-ref", "refs/venom/checkpoints/b1/"))

			stderr := env.Venom("checkpoint", "--agent=b1").Fails(t, 5, "conflict.tree_stale").Stderr
			fitsEighty(t, how, stderr)
			lines := strings.Split(stderr, "\n")
			clean := -1
			for i, l := range lines {
				assert.NotContains(t, l, "(its checkpoints stay)", "clean removes them")
				if strings.TrimSpace(strings.TrimPrefix(l, "hint:")) == "git venom-checkpoint clean --agent=b1" {
					clean = i
				}
			}
			require.Positive(t, clean, "no hint line is the clean command alone:\n%s", stderr)
			assert.Contains(t, lines[clean-1], "which removes its checkpoints", stderr)

			var rep doctorReport
			env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
			_, fix := rep.check(t, "agents.trees")
			assert.Contains(t, fix, "removes its checkpoints")

			env.run(env.Dir, nil, "sh", "-c", "git venom-checkpoint clean --agent=b1").OK(t)
			assert.Empty(t, env.Git("for-each-ref", "refs/venom/checkpoints/b1/"),
				"the hint says clean removes the agent's checkpoints")
		})
	}
}
