package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealClaude_WorktreesAndInstalledHooks: the real Claude Code, one
// session in the main worktree and one in a linked worktree, each with the
// hooks `hook install` wrote there, is each worktree's agent: the linked
// one's turn captures its own files and leaves the main worktree as it
// was. A rollback in the main worktree to before the install leaves
// .claude/settings.local.json alone (hook_settings); the hooks still run.
func TestRealClaude_WorktreesAndInstalledHooks(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Venom("checkpoint", "--agent=me", "--json").OK(t) // k1, before the install
	c := NewRealClaude(t, e)
	c.Model.Script("main turn 1", mockStep{Tools: []mockTool{Write(e.Path("a.txt"), "A\n")}}, mockStep{Text: "wrote a"})
	c.OK("main turn 1")
	main := stateOf(t, e, e.Dir)
	settings := fileHash(e.Path(".claude/settings.local.json"))

	w := e.InWorktree(t, "wt2", "side")
	cw := NewRealClaude(t, w)
	cw.Model.Script("linked turn 1", mockStep{Tools: []mockTool{Write(w.Path("w.txt"), "W\n")}}, mockStep{Text: "wrote w"})
	cw.OK("linked turn 1")
	require.Equal(t, main, stateOf(t, e, e.Dir), "the linked worktree's session changed the main worktree")

	trees := map[string]string{}
	for _, r := range e.Records("agent.registered") {
		trees[r["agent"].(string)] = r["tree"].(string)
	}
	require.Len(t, trees, 3)
	assert.Equal(t, e.Dir, trees["me"])
	assert.Equal(t, e.Dir, trees["claude"])
	var linked string
	for a, tree := range trees {
		if tree == w.Dir {
			linked = a
		}
	}
	require.NotEmpty(t, linked, "no agent of the linked worktree: %v", trees)
	ended := map[string]int{}
	for _, r := range e.Records("turn.ended") {
		ended[r["agent"].(string)]++
	}
	assert.Equal(t, map[string]int{"claude": 1, linked: 1}, ended)
	assert.Contains(t, gitIn(t, e, w.Dir, "ls-tree", "-r", "--name-only", "refs/venom/checkpoints/"+linked+"/2"), "w.txt")
	assert.NotContains(t, gitIn(t, e, e.Dir, "ls-tree", "-r", "--name-only", "refs/venom/checkpoints/claude/2"), "w.txt")

	// The person's rollback to before the install: Claude Code's a.txt
	// goes, our hooks stay.
	dry := e.DryRun("--agent=me", "k1", "--outside=overwrite")
	assert.Equal(t, "hook_settings", dry.LeftReasons()[".claude/settings.local.json"])
	e.Rollback("--agent=me", "k1", "--outside=overwrite")
	assert.NoFileExists(t, e.Path("a.txt"))
	assert.Equal(t, settings, fileHash(e.Path(".claude/settings.local.json")))
	c.Model.Script("main turn 2", mockStep{Tools: []mockTool{Write(e.Path("b.txt"), "B\n")}}, mockStep{Text: "wrote b"})
	c.OK("main turn 2")
	ended = map[string]int{}
	for _, r := range e.Records("turn.ended") {
		ended[r["agent"].(string)]++
	}
	assert.Equal(t, 2, ended["claude"], "the hooks did not run after the rollback")
	assert.FileExists(t, filepath.Join(w.Dir, "w.txt"))
}
