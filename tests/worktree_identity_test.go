package tests

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// worktreeState is what plain git and the files say of a worktree: every
// file's bytes, mode and mtime (treeHash), git status and git diff, HEAD
// and the index file's bytes.
type worktreeState struct {
	Files, Status, Diff, Head, Index string
}

func stateOf(t *testing.T, env *Env, dir string) worktreeState {
	t.Helper()
	idx := gitIn(t, env, dir, "rev-parse", "--path-format=absolute", "--git-path", "index")
	return worktreeState{
		Files:  treeHash(dir),
		Status: gitIn(t, env, dir, "status", "--porcelain=v1", "--untracked-files=all"),
		Diff:   gitIn(t, env, dir, "diff", "HEAD"),
		Head:   gitIn(t, env, dir, "rev-parse", "HEAD"),
		Index:  fileHash(idx),
	}
}

// errorData is a --json error's data, as a map.
func errorData(t *testing.T, r Result) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(dataOf(t, r)), &m))
	return m
}

// A command run in a linked worktree acts on that worktree, as every git
// command does.
func TestWorktree_CommandsActOnTheirOwnWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Commit("a")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	env.Write("a.txt", "one\ntwo\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	// a1 has a rollback, for --undo to have something to undo.
	env.Rollback("--agent=a1", "k1")
	env.Write("a.txt", "THE PERSON'S WORK IN MAIN\n")
	env.Write("main-only.txt", "untracked, main\n")

	w := env.InWorktree(t, "wt2", "side")
	w.Write("w.txt", "the linked worktree's file\n")
	main := stateOf(t, env, env.Dir)
	refs := env.VenomRefs()
	taken := len(env.Records("checkpoint.taken")) + len(env.Records("checkpoint.reused"))

	// The agent left out: none is this worktree's, and a1 is not picked.
	for _, args := range [][]string{
		{"checkpoint", "--json"},
		{"checkpoint", "--label=mine", "--json"},
		{"checkpoint", "list", "--json"},
		{"rollback", "k1", "--dry-run", "--json"},
		{"rollback", "--undo", "--dry-run", "--json"},
		{"diff", "k1", "--json"},
	} {
		r := env.VenomIn(w.Dir, nil, args[0], args[1:]...).Fails(t, 2, "invalid_params.agent")
		assert.Equal(t, []any{"a1"}, errorData(t, r)["elsewhere"], "%v", args)
	}
	human := env.VenomIn(w.Dir, nil, "checkpoint").Fails(t, 2, "")
	assert.Contains(t, human.Stderr, "error: invalid_params.agent: no agent works in this worktree")
	assert.Contains(t, human.Stderr, "hint: agent a1 works in another worktree:\nhint:   "+env.Dir+"\n")

	// a1 named: whatever reads or writes its files is refused here.
	for _, args := range [][]string{
		{"checkpoint", "--agent=a1", "--json"},
		{"checkpoint", "--agent=a1", "--label=relabel", "--json"},
		{"checkpoint", "--agent=a1", "--reason=turn_start", "--json"},
		{"rollback", "--agent=a1", "k1", "--dry-run", "--json"},
		{"rollback", "--agent=a1", "k1", "--restore=files", "--plan=p1-0123456789abcdef", "--json"},
		{"rollback", "--agent=a1", "--undo", "--dry-run", "--json"},
		{"diff", "--agent=a1", "k1", "--json"},
		{"checkpoint", "fork", "--agent=f1", "--from=a1", "--json"},
	} {
		r := env.VenomIn(w.Dir, []string{"VENOM_CALLER=person"}, args[0], args[1:]...).Fails(t, 2, "invalid_params.agent")
		assert.Equal(t, map[string]any{"agent": "a1", "tree": env.Dir}, errorData(t, r), "%v", args)
	}
	human = env.VenomIn(w.Dir, nil, "rollback", "--agent=a1", "k1", "--dry-run").Fails(t, 2, "")
	assert.Contains(t, human.Stderr, "error: invalid_params.agent: agent a1 works in another worktree\nhint: its worktree:\nhint:   "+env.Dir+"\n")
	assert.Empty(t, human.Stdout)
	// What only reads the log and the refs works from anywhere.
	env.VenomIn(w.Dir, nil, "checkpoint", "list", "--agent=a1", "--json").OK(t)
	env.VenomIn(w.Dir, nil, "diff", "--agent=a1", "k1", "k2", "--json").OK(t)
	env.VenomIn(w.Dir, nil, "checkpoint", "agents", "--json").OK(t)

	require.Equal(t, main, stateOf(t, env, env.Dir), "the main worktree changed")
	require.Equal(t, refs, env.VenomRefs())
	require.Equal(t, taken, len(env.Records("checkpoint.taken"))+len(env.Records("checkpoint.reused")))
	require.Empty(t, env.Records("turn.started"))
	require.Empty(t, env.Records("agent.registered")[1:], "only a1 is registered")

	// The linked worktree's own agent captures and rolls back its files.
	var tk TakeResult
	env.VenomIn(w.Dir, nil, "checkpoint", "--agent=b1", "--json").OK(t).JSON(t, &tk)
	reg := env.Records("agent.registered")
	require.Len(t, reg, 2)
	assert.Equal(t, w.Dir, reg[1]["tree"])
	w.Write("w.txt", "the agent's change\n")
	w.Write("new.txt", "new\n")
	env.VenomIn(w.Dir, nil, "checkpoint", "--json").OK(t) // b1, the only agent here
	require.Len(t, env.Records("agent.registered"), 2)
	env.VenomIn(env.Dir, nil, "checkpoint", "list", "--json").OK(t) // a1 there, b1 here
	dry := env.VenomIn(w.Dir, nil, "rollback", "k1", "--dry-run").OK(t)
	// The plan names the worktree it writes, its path alone on a line.
	assert.Contains(t, dry.Stdout, "\nWorktree:\n  "+w.Dir+"\n")
	w.Rollback("k1")
	assert.Equal(t, "the linked worktree's file\n", w.Read("w.txt"))
	assert.NoFileExists(t, filepath.Join(w.Dir, "new.txt"))
	real := env.VenomIn(w.Dir, nil, "rollback", "--undo", "--plan="+w.DryRun("--undo").Plan)
	real.OK(t)
	assert.Contains(t, real.Stdout, "Worktree:\n  "+w.Dir+"\n↺ Rolled back")
	assert.Equal(t, "the agent's change\n", w.Read("w.txt"))
	assert.Equal(t, "new\n", w.Read("new.txt"))

	// And the main worktree's, from there, its own.
	dry = env.Venom("rollback", "k1", "--dry-run", "--outside=keep").OK(t)
	assert.Contains(t, dry.Stdout, "\nWorktree:\n  "+env.Dir+"\n")
	assert.NotContains(t, dry.Stdout, w.Dir)
	linked := stateOf(t, env, w.Dir)
	env.Rollback("k1", "--outside=overwrite")
	require.Equal(t, "one\n", env.Read("a.txt"))
	require.Equal(t, linked, stateOf(t, env, w.Dir), "the linked worktree changed")
}

// A linked worktree moved with git worktree move keeps its agent's identity
// but not its path: the agent is refused there and from the main worktree
// with conflict.tree_stale (reason moved), saying where it went, and works
// again once moved back. A removed worktree's agent stays readable and is
// listed by doctor until cleaned.
func TestWorktree_MovedAndRemoved(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	w := env.InWorktree(t, "wt2", "side")
	env.VenomIn(w.Dir, nil, "checkpoint", "--agent=b1", "--json").OK(t)
	w.Write("w.txt", "b1's work\n")
	env.VenomIn(w.Dir, nil, "checkpoint", "--json").OK(t)
	env.Write("README.md", "THE PERSON'S WORK IN MAIN\n")
	main := stateOf(t, env, env.Dir)

	moved := filepath.Join(env.Root, "wt3")
	env.Git("worktree", "move", w.Dir, moved)
	there := stateOf(t, env, moved)
	refs := env.VenomRefs()
	for _, c := range []struct {
		dir  string
		args []string
	}{
		{moved, []string{"checkpoint", "--json"}},
		{moved, []string{"rollback", "k1", "--dry-run", "--json"}},
		{env.Dir, []string{"checkpoint", "--agent=b1", "--json"}},
		{env.Dir, []string{"rollback", "--agent=b1", "k1", "--dry-run", "--json"}},
		{env.Dir, []string{"diff", "--agent=b1", "k1", "--json"}},
	} {
		r := env.VenomIn(c.dir, nil, c.args[0], c.args[1:]...).Fails(t, 5, "conflict.tree_stale")
		assert.Equal(t, map[string]any{"agent": "b1", "tree": w.Dir, "reason": "moved"}, errorData(t, r), "%v", c.args)
	}
	human := env.Venom("rollback", "--agent=b1", "k1", "--dry-run").Fails(t, 5, "")
	assert.Contains(t, human.Stderr, "hint: it is now at:\nhint:   "+moved+"\n")
	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	msg, fix := rep.check(t, "agents.trees")
	assert.Contains(t, msg, "b1 at "+w.Dir+" (moved to "+moved+")")
	assert.Contains(t, fix, "git venom-checkpoint clean --agent=b1")
	require.Equal(t, there, stateOf(t, env, moved))
	require.Equal(t, main, stateOf(t, env, env.Dir))
	require.Equal(t, refs, env.VenomRefs())

	env.Git("worktree", "move", moved, w.Dir)
	w.Write("w.txt", "more\n")
	env.VenomIn(w.Dir, nil, "checkpoint", "--json").OK(t)
	w.Rollback("k2")
	assert.Equal(t, "b1's work\n", w.Read("w.txt"))

	env.Git("worktree", "remove", "--force", w.Dir)
	r := env.Venom("rollback", "--agent=b1", "k1", "--dry-run")
	r.Fails(t, 5, "conflict.tree_stale")
	assert.Contains(t, r.Stderr, "error: conflict.tree_stale: agent b1's worktree was removed\n")
	assert.NotContains(t, r.Stderr, "git worktree prune", "git worktree remove left nothing to prune")
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	msg, _ = rep.check(t, "agents.trees")
	assert.Contains(t, msg, "b1 at "+w.Dir+" (removed)")
	env.Venom("checkpoint", "list", "--agent=b1", "--json").OK(t)
	env.Venom("checkpoint", "clean", "--agent=b1", "--json").OK(t)
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["agents.trees"])
	require.Equal(t, main, stateOf(t, env, env.Dir))
}

// A harness session in a linked worktree gets an agent of its own: the
// default "claude" belongs to the main worktree's session.
func TestWorktree_HookSessionInALinkedWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
	env.Write("README.md", "claude's edit in main\n")
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p1"}))
	env.Write("README.md", "THE PERSON'S WORK IN MAIN\n")
	main := stateOf(t, env, env.Dir)

	w := env.InWorktree(t, "wt2", "side")
	session := map[string]any{"session_id": "0f0f0f0f-1111-4222-8333-abcdef012345"}
	w.Hook("claude-code", w.Payload("claude/hooks/SessionStart.startup.json", session))
	prompt := map[string]any{"session_id": session["session_id"], "prompt_id": "p9"}
	w.Hook("claude-code", w.Payload("claude/hooks/UserPromptSubmit.json", prompt))
	w.Write("w.txt", "the second session's file\n")
	w.Hook("claude-code", w.Payload("claude/hooks/Stop.json", prompt))

	reg := env.Records("agent.registered")
	require.Len(t, reg, 2)
	assert.Equal(t, "claude", reg[0]["agent"])
	assert.Equal(t, env.Dir, reg[0]["tree"])
	assert.Equal(t, "claude-ef012345", reg[1]["agent"])
	assert.Equal(t, w.Dir, reg[1]["tree"])
	var l ListResult
	env.VenomIn(w.Dir, nil, "checkpoint", "list", "--json").OK(t).JSON(t, &l)
	require.NotEmpty(t, l.Checkpoints)
	assert.Contains(t, gitIn(t, env, w.Dir, "ls-tree", "-r", "--name-only", "refs/venom/checkpoints/"+reg[1]["agent"].(string)+"/2"), "w.txt")
	require.Equal(t, main, stateOf(t, env, env.Dir))
}
