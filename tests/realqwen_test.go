package tests

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real Qwen Code 0.24.4 with git-venom's hooks: its turns, edits and
// sessions are the agent's, a rollback restores files only (the
// documented refusal of --restore=all), and uninstall leaves the tree as
// it was.

// TestRealQwen_TurnsEditsAndRollback: two turns of one session, a write
// and a shell edit, leave turn checkpoints; a rollback to turn 1 is
// refused with --restore=all (Qwen Code's session cannot be rewound from
// outside) and restores the files with --restore=files; the next prompt
// carries the rollback note to the model.
func TestRealQwen_TurnsEditsAndRollback(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	e.Write(".gitignore", ".qwen/\n")
	e.Commit("ignore the harness's settings")

	sid := newUUID(t)
	q.Chat.Script("write a", chatStep{Tool: "write_file", Args: map[string]any{"file_path": e.Path("a.txt"), "content": "A\n"}},
		chatStep{Text: "wrote a"})
	q.OK("write a", "--session-id", sid)
	q.Chat.Script("shell b", chatStep{Tool: "run_shell_command", Args: map[string]any{"command": "echo B > b.txt"}},
		chatStep{Text: "made b"})
	q.OK("shell b", "--resume", sid)

	reg := e.Records("agent.registered")
	require.Len(t, reg, 1)
	assert.Equal(t, "qwen", reg[0]["agent"])
	assert.Equal(t, "qwen-code", reg[0]["harness"])
	assert.Equal(t, sid, boundSession(t, e, "qwen"))
	assert.Len(t, e.Records("turn.started"), 2, "one turn a prompt, whatever its model requests")
	assert.Equal(t, []string{"t1", "t2"}, endedTurns(e, "qwen"))
	edits := e.Records("edit.recorded")
	require.Len(t, edits, 1, "the write is an edit; the shell's file is found by the capture")
	assert.Equal(t, []any{"a.txt"}, edits[0]["paths"])
	assert.Equal(t, "t1", edits[0]["turn"])
	t1, t2 := turnEnd(t, e, "qwen", "t1"), turnEnd(t, e, "qwen", "t2")
	ref := func(c ListItem) string { return "refs/venom/checkpoints/qwen/" + strings.TrimPrefix(c.Checkpoint, "k") }
	assert.Equal(t, "A", e.Git("show", ref(t1)+":a.txt"))
	assert.Equal(t, "B", e.Git("show", ref(t2)+":b.txt"))
	assert.NotEqual(t, 0, e.GitRaw("cat-file", "-e", ref(t1)+":b.txt").Code, "b.txt is turn 2's")

	r := e.Venom("rollback", "--agent=qwen", "--checkpoint="+t1.Checkpoint, "--dry-run", "--json")
	r.Fails(t, 10, "unsupported.harness_capability")
	assert.Contains(t, string(ErrorOf(t, r).Error.Data), `"fix":"--restore=files"`)
	humanRollback(t, e, "--agent=qwen", "--checkpoint="+t1.Checkpoint, "--restore=files")
	assert.NoFileExists(t, e.Path("b.txt"))
	assert.Equal(t, "A\n", e.Read("a.txt"))

	q.Chat.Script("and now", chatStep{Text: "ok"})
	q.OK("and now", "--resume", sid)
	users := q.LastRequestFor("and now")
	assert.Contains(t, users[len(users)-1], "rolled back to their state after turn t1")
	assert.Contains(t, users[len(users)-1], "and now")
	assert.Len(t, e.Records("note.delivered"), 1)
}

// TestRealQwen_TwoSessionsAreTwoAgents: two Qwen Code runs at once in one
// tree are two agents, told apart by their session ids and processes.
func TestRealQwen_TwoSessionsAreTwoAgents(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)

	twoSessionsAreTwoAgents(t, e, q, q.Chat, "qwen", func(path, content string) chatStep {
		return chatStep{Tool: "write_file", Args: map[string]any{"file_path": path, "content": content}}
	})
}

// TestRealQwen_FailedCallAndInterruptLeaveNoTurnRunning: a failed model
// call ends `qwen -p` with neither Stop nor StopFailure, and SIGINT with
// no event at all; each turn's process has exited, so the next rollback
// ends it first instead of refusing conflict.turn_running.
func TestRealQwen_FailedCallAndInterruptLeaveNoTurnRunning(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)

	q.Chat.Script("make a", chatStep{Tool: "write_file", Args: map[string]any{"file_path": e.Path("a.txt"), "content": "A\n"}},
		chatStep{Fail: true})
	_, _ = q.Run("make a") // fails or not: the turn's process is gone either way
	require.Equal(t, "A\n", e.Read("a.txt"))
	require.Len(t, e.Records("turn.started"), 1)
	humanRollback(t, e, "--agent=qwen", "--checkpoint=k1", "--restore=files")
	assert.Equal(t, []string{"t1"}, endedTurns(e, "qwen"), "the rollback ended the failed turn")
	assert.NoFileExists(t, e.Path("a.txt"))

	interruptMidTurn(t, e, q, q.Chat, func(path, content string) chatStep {
		return chatStep{Tool: "write_file", Args: map[string]any{"file_path": path, "content": content}}
	}, func(cmd *exec.Cmd) { Interrupt(t, cmd) })
	started := e.Records("turn.started")
	require.Len(t, started, 2)
	// The launcher exits at once; the program, its child, a moment later.
	waitExited(t, int(started[1]["harness_pid"].(float64)), time.Minute)

	t1 := turnEnd(t, e, "qwen", "t1")
	humanRollback(t, e, "--agent=qwen", "--checkpoint="+t1.Checkpoint, "--restore=files")
	assert.Equal(t, []string{"t1", "t2"}, endedTurns(e, "qwen"), "the rollback ended the interrupted turn")
	assert.NoFileExists(t, e.Path("h.txt"))
}

// TestRealQwen_UninstallLeavesTheTree: install then uninstall leaves the
// tree byte for byte; after Qwen Code has run with the hooks, uninstall
// leaves nothing of them (Qwen Code writes its own files in its home).
func TestRealQwen_UninstallLeavesTheTree(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	before := e.Snapshot()
	files := contentsOf(t, e)
	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	require.FileExists(t, e.Path(".qwen/settings.json"))
	e.Venom("checkpoint", "hook", "uninstall", "qwen-code").OK(t)
	assert.Equal(t, files, contentsOf(t, e))
	after := e.Snapshot()
	after.Files = before.Files // a folder made and removed in the top folder moves its mtime
	assert.Equal(t, before, after, "git's state")

	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	q.Chat.Script("hello", chatStep{Text: "hi"})
	q.OK("hello")
	require.NotEmpty(t, e.Records("turn.ended"), "the hooks ran")
	e.Venom("checkpoint", "hook", "uninstall", "qwen-code").OK(t)
	assert.Equal(t, files, contentsOf(t, e), "Qwen Code left nothing in the tree")
	assert.Equal(t, "", e.Git("status", "--porcelain", "--ignored"))
}

// TestRealQwen_PerToolMarksShellCalls: with --per-tool, Qwen Code runs
// the hook after run_shell_command too (its matcher is a list of exact
// tool names), and each call that changed the tree is marked under its
// turn with its command or path.
func TestRealQwen_PerToolMarksShellCalls(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	e.Venom("checkpoint", "hook", "install", "qwen-code", "--per-tool").OK(t)
	e.Write(".gitignore", ".qwen/\n")
	e.Commit("ignore the harness's settings")
	q.Chat.Script("edit twice",
		chatStep{Tool: "run_shell_command", Args: map[string]any{"command": "echo B > b.txt"}},
		chatStep{Tool: "run_shell_command", Args: map[string]any{"command": "cat b.txt"}},
		chatStep{Tool: "write_file", Args: map[string]any{"file_path": e.Path("w.txt"), "content": "w\n"}},
		chatStep{Text: "done"})
	q.OK("edit twice")
	require.Equal(t, "B\n", e.Read("b.txt"))

	marks := e.Records("tool.marked")
	require.Len(t, marks, 2, "cat changed nothing")
	for i, want := range [][2]string{{"run_shell_command", "echo B > b.txt"}, {"write_file", "w.txt"}} {
		assert.Equal(t, "t1."+string(rune('1'+i)), marks[i]["mark"])
		assert.Equal(t, want[0], marks[i]["tool"])
		assert.Equal(t, want[1], marks[i]["command"])
		assert.NotEmpty(t, marks[i]["tool_use_id"])
	}
	e.Rollback("--agent=qwen", "t1.2")
	assert.NoFileExists(t, e.Path("w.txt"))
	assert.Equal(t, "B\n", e.Read("b.txt"))
}

// TestRealQwen_SubagentIsItsParentsTurn: the agent tool's sub-agent runs
// in the same Qwen Code process; its model requests open no turn of
// their own, and its edits are its parent's turn's, under the parent's
// agent.
func TestRealQwen_SubagentIsItsParentsTurn(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	q.Chat.Script("delegate", chatStep{Tool: "agent", Args: map[string]any{"description": "sub work",
		"prompt": "do the sub work", "subagent_type": "general-purpose"}},
		chatStep{Tool: "write_file", Args: map[string]any{"file_path": e.Path("after.txt"), "content": "a\n"}},
		chatStep{Text: "delegated"})
	q.Chat.Script("do the sub work", chatStep{Tool: "write_file", Args: map[string]any{"file_path": e.Path("sub.txt"), "content": "s\n"}},
		chatStep{Text: "sub done"})
	q.OK("delegate")
	require.Equal(t, "s\n", e.Read("sub.txt"), "the sub-agent ran")
	require.Len(t, e.Records("agent.registered"), 1)
	require.Len(t, e.Records("turn.started"), 1, "the sub-agent's requests open no turn")
	assert.Equal(t, []string{"t1"}, endedTurns(e, "qwen"))
	var paths []any
	for _, r := range e.Records("edit.recorded") {
		assert.Equal(t, "t1", r["turn"])
		paths = append(paths, r["paths"].([]any)...)
	}
	// The two hooks' order varies: the sub-agent's may be recorded last.
	assert.ElementsMatch(t, []any{"sub.txt", "after.txt"}, paths, "the sub-agent's edit and its parent's, in one turn")
}

// TestRealQwen_UntrustedFolderRunsNoHook: with Qwen Code's folder trust
// on, an untrusted repository's .qwen/settings.json is not read, so its
// hooks never run, and doctor says so; installed for the user, the hooks
// run in any folder.
func TestRealQwen_UntrustedFolderRunsNoHook(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	q := e.UseRealQwen(t)
	q.UserSettings(func(s map[string]any) {
		s["security"].(map[string]any)["folderTrust"] = map[string]any{"enabled": true}
	})
	e.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	q.Chat.Script("hello", chatStep{Text: "hi"})
	q.OK("hello")
	assert.Empty(t, e.Records("turn.started"), "Qwen Code read no hook of the repository's")
	c := e.doctorCheck(t, "harness.qwen-code.hooks")
	assert.Equal(t, "warn", c["status"])
	assert.Contains(t, c["message"], "is not trusted")

	e.Venom("checkpoint", "hook", "uninstall", "qwen-code").OK(t)
	e.Venom("checkpoint", "hook", "install", "qwen-code", "--scope=user").OK(t)
	assert.Equal(t, "ok", e.doctorCheck(t, "harness.qwen-code.hooks")["status"])
	q.OK("hello")
	assert.Equal(t, []string{"t1"}, endedTurns(e, "qwen"), "the user's hooks run in any folder")
}
