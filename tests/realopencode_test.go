package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real OpenCode with git-venom's plugin: its turns, edits
// and sessions are the agent's, a rollback forks its conversation, and
// uninstall leaves the tree as it was.

// boundSession is the session of the agent's latest agent.binding.
func boundSession(t *testing.T, e *Env, agent string) string {
	t.Helper()
	s := ""
	for _, r := range e.Records("agent.binding") {
		if r["agent"] == agent {
			s, _ = r["harness_session"].(string)
		}
	}
	require.NotEmpty(t, s, "no binding of %s", agent)
	return s
}

// endedTurns lists the turn.ended records' turns of the agent.
func endedTurns(e *Env, agent string) []string {
	var out []string
	for _, r := range e.Records("turn.ended") {
		if r["agent"] == agent {
			out = append(out, r["turn"].(string))
		}
	}
	return out
}

// TestRealOpenCode_TurnsEditsAndRewind: two turns of one session, a write
// and a shell edit, leave turn checkpoints; a rollback to turn 1 forks the
// conversation, and the command it prints continues it without turn 2.
func TestRealOpenCode_TurnsEditsAndRewind(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	o := e.UseRealOpenCode(t)
	e.Venom("checkpoint", "hook", "install", "opencode").OK(t)

	o.Chat.Script("write a", chatStep{Tool: "write", Args: map[string]any{"filePath": e.Path("a.txt"), "content": "A\n"}},
		chatStep{Text: "wrote a"})
	o.OK("write a")
	session := boundSession(t, e, "opencode")
	o.Chat.Script("shell b", chatStep{Tool: "bash", Args: map[string]any{"command": "echo B > b.txt", "description": "b"}},
		chatStep{Text: "made b"})
	o.OK("shell b", "-s", session)

	reg := e.Records("agent.registered")
	require.Len(t, reg, 1)
	assert.Equal(t, "opencode", reg[0]["harness"])
	assert.Equal(t, []string{"t1", "t2"}, endedTurns(e, "opencode"))
	edits := e.Records("edit.recorded")
	require.Len(t, edits, 1, "the write is an edit; the shell's file is found by the capture")
	assert.Equal(t, []any{"a.txt"}, edits[0]["paths"])
	assert.Equal(t, "t1", edits[0]["turn"])
	t1, t2 := turnEnd(t, e, "opencode", "t1"), turnEnd(t, e, "opencode", "t2")
	ref := func(c ListItem) string {
		return "refs/venom/checkpoints/opencode/" + strings.TrimPrefix(c.Checkpoint, "k")
	}
	assert.Equal(t, "A", e.Git("show", ref(t1)+":a.txt"))
	assert.Equal(t, "B", e.Git("show", ref(t2)+":b.txt"))
	assert.NotEqual(t, 0, e.GitRaw("cat-file", "-e", ref(t1)+":b.txt").Code, "b.txt is turn 2's")

	out := humanRollback(t, e, "--agent=opencode", "--checkpoint="+t1.Checkpoint)
	resume := resumeLine(t, out)
	require.Len(t, resume, 3, out)
	assert.Equal(t, []string{"opencode", "-s"}, resume[:2])
	assert.NotEqual(t, session, resume[2], "a new session: the person's own is left as it was")
	assert.NoFileExists(t, e.Path("b.txt"))
	assert.Equal(t, "A\n", e.Read("a.txt"))

	o.Chat.Script("after the rollback", chatStep{Text: "ok"})
	o.OK("after the rollback", resume[1:]...)
	reqs := o.Chat.Requests()
	users := UserTexts(reqs[len(reqs)-1])
	joined := strings.Join(users, "\n")
	assert.Contains(t, joined, "write a")
	assert.NotContains(t, joined, "shell b", "turn 2 is not in the rewound conversation")
	assert.Contains(t, joined, "after the rollback")
	assert.Equal(t, resume[2], boundSession(t, e, "opencode"), "the rewound session is the agent's")
}

// TestRealOpenCode_TwoSessionsAreTwoAgents: two OpenCode runs at once in
// one tree are two agents, told apart by OPENCODE_PID and session id.
func TestRealOpenCode_TwoSessionsAreTwoAgents(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	o := e.UseRealOpenCode(t)
	e.Venom("checkpoint", "hook", "install", "opencode").OK(t)
	// No first run to install OpenCode's plugin package: Command seeds
	// .opencode/ for each run, so the two start alike.
	twoSessionsAreTwoAgents(t, e, o, o.Chat, "opencode", func(path, content string) chatStep {
		return chatStep{Tool: "write", Args: map[string]any{"filePath": path, "content": content}}
	})
}

// TestRealOpenCode_FailedCallAndInterruptLeaveNoTurnRunning: a failed
// model call still ends its turn (session.idle); a SIGINT ends `opencode
// run` with no end at all, and the next rollback ends that turn.
func TestRealOpenCode_FailedCallAndInterruptLeaveNoTurnRunning(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	o := e.UseRealOpenCode(t)
	e.Venom("checkpoint", "hook", "install", "opencode").OK(t)

	o.Chat.Script("make a", chatStep{Tool: "write", Args: map[string]any{"filePath": e.Path("a.txt"), "content": "A\n"}},
		chatStep{Fail: true})
	_, _ = o.Run("make a") // fails or not: the turn ends either way
	require.Equal(t, "A\n", e.Read("a.txt"))
	require.Equal(t, []string{"t1"}, endedTurns(e, "opencode"), "the failed call's turn ended")

	interruptMidTurn(t, e, o, o.Chat, func(path, content string) chatStep {
		return chatStep{Tool: "write", Args: map[string]any{"filePath": path, "content": content}}
	}, func(cmd *exec.Cmd) { require.NoError(t, cmd.Process.Signal(syscall.SIGINT)) })
	require.Equal(t, []string{"t1"}, endedTurns(e, "opencode"), "SIGINT ends opencode run with no end")

	t1 := turnEnd(t, e, "opencode", "t1")
	humanRollback(t, e, "--agent=opencode", "--checkpoint="+t1.Checkpoint, "--restore=files")
	assert.Equal(t, []string{"t1", "t2"}, endedTurns(e, "opencode"), "the rollback ended the interrupted turn")
	assert.NoFileExists(t, e.Path("h.txt"))

	// The next prompt carries the rollback note to the model.
	o.Chat.Script("and now", chatStep{Text: "ok"})
	o.OK("and now")
	reqs := o.Chat.Requests()
	users := UserTexts(reqs[len(reqs)-1])
	assert.Contains(t, users[len(users)-1], "rolled back")
	assert.Contains(t, users[len(users)-1], "and now")
	assert.Len(t, e.Records("note.delivered"), 1)
}

// TestRealOpenCode_SubagentIsItsParentsTurn: a task tool's sub-agent
// session (parentID) is no turn of its own; its edits are its parent's
// turn's, under the parent's agent.
func TestRealOpenCode_SubagentIsItsParentsTurn(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	o := e.UseRealOpenCode(t)
	e.Venom("checkpoint", "hook", "install", "opencode").OK(t)
	o.Chat.Script("delegate", chatStep{Tool: "task", Args: map[string]any{"description": "sub work",
		"prompt": "do the sub work", "subagent_type": "general"}}, chatStep{Text: "delegated"})
	o.Chat.Script("do the sub work", chatStep{Tool: "write", Args: map[string]any{"filePath": e.Path("sub.txt"), "content": "s\n"}},
		chatStep{Text: "sub done"})
	o.OK("delegate")
	require.Equal(t, "s\n", e.Read("sub.txt"), "the sub-agent ran")
	reg := e.Records("agent.registered")
	require.Len(t, reg, 1, "one agent: %v", reg)
	assert.Equal(t, []string{"t1"}, endedTurns(e, "opencode"), "the sub-agent's session is no turn")
	edits := e.Records("edit.recorded")
	require.Len(t, edits, 1)
	assert.Equal(t, []any{"sub.txt"}, edits[0]["paths"])
	assert.Equal(t, "t1", edits[0]["turn"])
}

// TestRealOpenCode_UninstallLeavesTheTree: install then uninstall leaves
// the tree byte for byte; after OpenCode has run, uninstall removes the
// plugin only, and OpenCode's own files (ignored by its own .gitignore)
// stay.
func TestRealOpenCode_UninstallLeavesTheTree(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	o := e.UseRealOpenCode(t)
	before := e.Snapshot()
	files := contentsOf(t, e)
	e.Venom("checkpoint", "hook", "install", "opencode").OK(t)
	plugin := e.Path(".opencode/plugins/git-venom.js")
	require.FileExists(t, plugin)
	e.Venom("checkpoint", "hook", "uninstall", "opencode").OK(t)
	// Every file and folder as it was, byte for byte (mtimes aside: a
	// folder made and removed in the top folder moves its mtime).
	assert.Equal(t, files, contentsOf(t, e))
	after := e.Snapshot()
	after.Files = before.Files
	assert.Equal(t, before, after, "git's state")
	assert.NoDirExists(t, e.Path(".opencode"))

	e.Venom("checkpoint", "hook", "install", "opencode").OK(t)
	o.Chat.Script("hello", chatStep{Text: "hi"})
	o.OK("hello")
	require.NotEmpty(t, e.Records("turn.ended"), "the plugin ran")
	e.Venom("checkpoint", "hook", "uninstall", "opencode").OK(t)
	assert.NoFileExists(t, plugin)
	assert.NoDirExists(t, filepath.Dir(plugin))
	assert.Equal(t, "", e.Git("status", "--porcelain"), "what OpenCode wrote in .opencode/ it ignores itself")
	_, err := os.Stat(e.Path(".opencode/.gitignore"))
	assert.NoError(t, err, "OpenCode's own file stays")
}
