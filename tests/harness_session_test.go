package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Claude Code 2.1.332 session driven by its hook payloads
// (tests/testdata/hooks/claude): three turns with edits by edit tools and
// by shell commands, a person's edit between turns, a rollback with
// restore=all that rewinds the conversation, the forked session starting,
// a rollback with restore=files and its note, and a fork.
func TestScriptedSession_ClaudeCode(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// The hooks as hook install sets them up: each event runs the command
	// this test runs.
	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal([]byte(env.Read(".claude/settings.local.json")), &settings))
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "StopFailure"} {
		require.Equal(t, "git venom-checkpoint hook claude-code", settings.Hooks[ev][0].Hooks[0].Command, ev)
	}
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() {
		env.Write("hello.txt", "hello\n")
		env.Hook("claude-code", writeTool(env, "p1", "hello.txt"))
		env.Write("gen/out.txt", "one\n") // a shell command's output
	})
	env.Write("README.md", "a person's edit\n")
	claudeTurn(t, env, "p2", t2End, func() {
		env.Write("hello.txt", "hello world\n")
		env.Hook("claude-code", env.Payload("claude/hooks/PostToolUse.Edit.json", map[string]any{"prompt_id": "p2"}))
		env.Write("gen/out.txt", "two\n")
	})
	claudeTurn(t, env, "p3", t3End, func() {
		env.Write("hello.txt", "hello there\n")
		env.Hook("claude-code", writeTool(env, "p3", "hello.txt"))
		env.Remove("gen/out.txt")
	})
	l := env.List(t, "--agent=claude")
	require.Equal(t, "k5", l.Checkpoints[0].Checkpoint)
	for id, conv := range conversations(l) {
		require.True(t, conv, id)
	}

	// An agent's shell may not roll back a tree it shares with a person.
	for _, rel := range []string{"claude/hooks/bash-tool-env.txt", "codex/hooks/shell-tool-env.txt"} {
		plan := env.DryRun("--agent=claude", "--checkpoint=k2", "--outside=keep").Plan
		r := env.VenomIn(env.Dir, envFile(t, rel), "rollback", "--agent=claude", "--checkpoint=k2", "--outside=keep",
			"--plan="+plan, "--json")
		r.Fails(t, 4, "denied.agent_caller")
	}

	// Edit tools' paths are the agent's, shell commands' the turn's, and
	// the person's edit between turns is outside.
	classes := env.DryRun("--agent=claude", "--checkpoint=k2", "--outside=keep").Classes()
	assert.Equal(t, map[string]string{"hello.txt": "agent", "gen/out.txt": "turn"}, classes)

	// Back to t1, files and conversation: the person's README stays.
	res := env.RollbackConv("--agent=claude", "--checkpoint=k2", "--outside=keep")
	c := res.Conversation
	assert.True(t, c.Rewinds)
	assert.Equal(t, "t1", *c.ThroughTurn)
	assert.Equal(t, []string{"t2", "t3"}, c.Drops)
	require.Len(t, c.HarnessSession, 36)
	assert.Equal(t, []string{"claude", "-p", "--resume", claudeSession, "--resume-session-at", t1End, "--fork-session",
		"--session-id", c.HarnessSession}, c.Resume)
	assert.Equal(t, "hello\n", env.Read("hello.txt"))
	assert.Equal(t, "one\n", env.Read("gen/out.txt"))
	assert.Equal(t, "a person's edit\n", env.Read("README.md"))
	binds := env.Records("agent.binding")
	last := binds[len(binds)-1]
	assert.Equal(t, c.HarnessSession, last["harness_session"])
	assert.Equal(t, claudeSession, last["fork_source"])
	assert.Equal(t, t1End, last["fork_at"])
	_, err := os.Stat(filepath.Join(env.claudeProjectDir(), c.HarnessSession+".jsonl"))
	assert.True(t, os.IsNotExist(err), "the copy is made by the next start, not by venom")

	conv := conversations(env.List(t, "--agent=claude"))
	assert.True(t, conv["k1"])
	assert.True(t, conv["k2"], "t1 is the latest turn now")
	assert.True(t, conv["k3"], "t2's turn_start is through t1")
	for _, k := range []string{"k4", "k5", "k6"} {
		assert.False(t, conv[k], "%s's conversation was dropped", k)
	}
	env.Venom("checkpoint", "fork", "--agent=side", "--from=claude", "--through-turn=t3", "--json").
		Fails(t, 3, "not_found.turn")

	// The person runs the resume command: Claude Code starts the fork.
	env.Transcript(c.HarnessSession, t1End)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.fork.json", map[string]any{"session_id": c.HarnessSession,
		"transcript_path": filepath.Join(env.claudeProjectDir(), c.HarnessSession+".jsonl")}))
	binds = env.Records("agent.binding")
	last = binds[len(binds)-1]
	assert.Equal(t, c.HarnessSession, last["harness_session"])
	assert.Empty(t, last["fork_source"], "the fork's start clears fork_source and fork_at")
	assert.Empty(t, last["fork_at"])

	// Turn numbering goes on; no note after a rewind.
	newSession := map[string]any{"session_id": c.HarnessSession, "prompt_id": "p4",
		"transcript_path": filepath.Join(env.claudeProjectDir(), c.HarnessSession+".jsonl")}
	r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", newSession))
	assert.Empty(t, r.Stdout)
	env.Write("hello.txt", "hello again\n")
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", newSession))
	starts := env.Records("turn.started")
	assert.Equal(t, "t4", starts[len(starts)-1]["turn"])

	// Going forward again: k5 (t3's files) with restore=files.
	files := env.RollbackConv("--agent=claude", "--checkpoint=k5", "--restore=files", "--outside=keep")
	assert.False(t, files.Conversation.Rewinds)
	assert.Equal(t, "hello there\n", env.Read("hello.txt"))
	_, err = os.Stat(env.Path("gen/out.txt"))
	assert.True(t, os.IsNotExist(err))
	r = env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"session_id": c.HarnessSession, "prompt_id": "p5"}))
	var note struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	r.JSON(t, &note)
	assert.True(t, strings.HasPrefix(note.HookSpecificOutput.AdditionalContext,
		"Note: the files were rolled back to their state after turn t3."), note.HookSpecificOutput.AdditionalContext)
	r = env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"session_id": c.HarnessSession, "prompt_id": "p6"}))
	assert.Empty(t, r.Stdout, "the note is delivered once")
	require.Len(t, env.Records("note.delivered"), 1)

	// A fork through the latest turn shares the tree.
	var fork forkResult
	env.Venom("checkpoint", "fork", "--agent=side", "--from=claude", "--through-turn=t4", "--json").OK(t).JSON(t, &fork)
	require.NotNil(t, fork.ForkCheckpoint)
	assert.Equal(t, "k1", *fork.ForkCheckpoint)
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"session_id": c.HarnessSession, "prompt_id": "p6"}))
	assert.True(t, *env.DryRun("--agent=side", "--checkpoint=k1", "--restore=files", "--outside=keep").Guarded)
}

func TestRewind_ClaudeMaterialize(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() { env.Write("a.txt", "1\n") })
	claudeTurn(t, env, "p2", t2End, func() { env.Write("a.txt", "2\n") })
	src := env.Transcript(claudeSession, "") // the whole session, as it is on disk later
	before, err := os.ReadFile(src)
	require.NoError(t, err)

	res := env.RollbackConv("--agent=claude", "--checkpoint=k2", "--outside=keep", "--materialize")
	c := res.Conversation
	assert.Equal(t, []string{"claude", "--resume", c.HarnessSession}, c.Resume, "an interactive resume opens the copy")
	copyPath := filepath.Join(env.claudeProjectDir(), c.HarnessSession+".jsonl")
	data, err := os.ReadFile(copyPath)
	require.NoError(t, err)
	after, _ := os.ReadFile(src)
	assert.Equal(t, before, after, "the source transcript is never modified")
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var lastChain struct {
		SessionID  string `json:"sessionId"`
		ForkedFrom struct {
			MessageUUID string `json:"messageUuid"`
		} `json:"forkedFrom"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-3]), &lastChain))
	assert.Equal(t, t1End, lastChain.ForkedFrom.MessageUUID, "the copy ends at turn 1's last entry")
	assert.Equal(t, c.HarnessSession, lastChain.SessionID)
	binds := env.Records("agent.binding")
	last := binds[len(binds)-1]
	assert.Equal(t, c.HarnessSession, last["harness_session"])
	assert.Empty(t, last["fork_at"], "the copy exists already")
}

// A Codex 0.171.0 session driven by its hooks and notify
// (tests/testdata/hooks/codex), rewound through the app-server protocol
// double.
func TestScriptedSession_Codex(t *testing.T) {
	t.Parallel()
	const (
		thread = "01a22c93-1777-7b03-81d2-cc9f451e14c8"
		turn1  = "01a22c93-1812-7df0-9ee4-f5a15fed6464"
		turn2  = "01a22c93-4615-7e41-bfc6-61fc84931e71"
		turn3  = "01a22c93-5000-7000-8000-000000000003"
	)
	env := NewEnv(t)
	home := env.UseCodexDouble(map[string][]string{thread: {turn1, turn2, turn3}})
	env.Hook("codex", env.Payload("codex/hooks/SessionStart.startup.json", nil))
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", nil))
	env.Write("hello.txt", "hello\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.apply_patch.add.json", nil))
	env.Write("shell.txt", "hi\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.Bash.json", nil))
	env.Hook("codex", env.Payload("codex/hooks/Stop.turn1.json", nil))
	env.Write("README.md", "a person's edit\n")
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": turn2}))
	env.Write("hello.txt", "hello world\n")
	env.Write("notes/b.txt", "b\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.apply_patch.update-and-add.json", nil))
	env.Hook("codex", env.Payload("codex/hooks/Stop.turn2.json", nil))
	notify, err := os.ReadFile(filepath.Join(hookData, "codex/hooks/notify.exec.turn2.argv.json"))
	require.NoError(t, err)
	env.VenomIn(env.Dir, nil, "checkpoint", "hook", "codex", strings.ReplaceAll(strings.TrimSpace(string(notify)), cxProj, env.Dir)).OK(t)
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": turn3}))
	env.Write("shell.txt", "three\n")
	env.Hook("codex", env.Payload("codex/hooks/Stop.turn2.json", map[string]any{"turn_id": turn3}))
	require.Len(t, env.Records("turn.ended"), 3, "notify's report of turn 2 was a no-op")
	k := env.List(t, "--agent=codex").Checkpoints
	require.Equal(t, "k5", k[0].Checkpoint)

	// The harness refuses: nothing changes.
	snap := env.Snapshot()
	refused := env.Extra
	env.Extra = append(append([]string{}, env.Extra...), "CODEX_DOUBLE_REFUSE=thread is busy")
	plan := env.DryRun("--agent=codex", "--checkpoint=k2", "--outside=keep").Plan
	env.Venom("rollback", "--agent=codex", "--checkpoint=k2", "--outside=keep", "--plan="+plan, "--json").
		Fails(t, 5, "conflict.harness_fork_refused")
	env.Extra = refused
	env.AssertUntouched(t, snap)

	res := env.RollbackConv("--agent=codex", "--checkpoint=k2", "--outside=keep")
	c := res.Conversation
	assert.Equal(t, []string{"t2", "t3"}, c.Drops)
	require.NotEmpty(t, c.HarnessSession)
	assert.NotEqual(t, thread, c.HarnessSession)
	assert.Equal(t, []string{"codex", "resume", c.HarnessSession}, c.Resume)
	assert.Equal(t, "hello\n", env.Read("hello.txt"))
	assert.Equal(t, "hi\n", env.Read("shell.txt"))
	assert.Equal(t, "a person's edit\n", env.Read("README.md"))
	var st struct {
		Threads map[string][]string `json:"threads"`
	}
	b, err := os.ReadFile(filepath.Join(home, "double.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &st))
	assert.Equal(t, []string{turn1}, st.Threads[c.HarnessSession], "thread/fork through turn 1")
	assert.Contains(t, readFile(t, filepath.Join(home, "double.log")), `"lastTurnId":"`+turn1+`","threadId":"`+thread+`"`)

	// The fork's first turn, reported by notify from the new thread.
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"session_id": c.HarnessSession, "turn_id": "t4-id"}))
	env.Write("hello.txt", "again\n")
	env.VenomIn(env.Dir, nil, "checkpoint", "hook", "codex",
		`{"type":"agent-turn-complete","thread-id":"`+c.HarnessSession+`","turn-id":"t4-id","cwd":"`+env.Dir+`"}`).OK(t)
	ends := env.Records("turn.ended")
	assert.Equal(t, "t4", ends[len(ends)-1]["turn"])
	conv := conversations(env.List(t, "--agent=codex"))
	assert.False(t, conv["k4"], "a dropped turn's checkpoint")
	assert.True(t, conv["k2"])

	// restore=files back to t3's files, and the note.
	env.RollbackConv("--agent=codex", "--checkpoint=k5", "--restore=files", "--outside=keep")
	r := env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": "t5-id"}))
	assert.Contains(t, r.Stdout, "after turn t3")
	r = env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": "t6-id"}))
	assert.Empty(t, r.Stdout)
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// A turn rewinds in the session it ran in, also after /clear started another.
func TestRewind_ClaudeTurnOfAnEarlierSession(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() { env.Write("a.txt", "1\n") })
	claudeTurn(t, env, "p2", t2End, func() { env.Write("a.txt", "2\n") })
	const cleared = "11111111-2222-4333-8444-555555555555"
	other := map[string]any{"session_id": cleared, "source": "clear",
		"transcript_path": filepath.Join(env.claudeProjectDir(), cleared+".jsonl")}
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", other))
	delete(other, "source")
	other["prompt_id"] = "p3"
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", other))
	env.Write("a.txt", "3\n")
	env.Transcript(cleared, t1End)
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", other))
	starts := env.Records("turn.started")
	assert.Equal(t, claudeSession, starts[0]["harness_session"])
	assert.Equal(t, cleared, starts[2]["harness_session"])

	c := env.RollbackConv("--agent=claude", "--checkpoint=k2", "--outside=keep").Conversation
	assert.Equal(t, []string{"claude", "-p", "--resume", claudeSession, "--resume-session-at", t1End, "--fork-session",
		"--session-id", c.HarnessSession}, c.Resume)
}
