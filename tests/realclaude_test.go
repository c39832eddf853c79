package tests

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionAgent is DefaultAgent's name for a second live session.
func sessionAgent(session string) string {
	s := strings.ReplaceAll(session, "-", "")
	return "claude-" + s[len(s)-8:]
}

// TestRealClaude_TwoSessionsAreTwoAgents (docs/harness.md#hook-agents):
// two real sessions in one worktree, the second starting and finishing a
// turn while the first's turn runs. Each session is its own agent: the
// second's SessionStart does not end the first's turn, each turn's edits
// are its own agent's, and a rollback's plan shows neither's files as
// outside edits.
func TestRealClaude_TwoSessionsAreTwoAgents(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := NewRealClaude(t, e)
	sa, sb := newUUID(t), newUUID(t)
	gate := make(chan struct{})
	c.Model.Script("session A turn 1", mockStep{Tools: []mockTool{Write(e.Path("a.txt"), "A\n")}},
		mockStep{Text: "wrote a", Gate: gate})
	c.Model.Script("session B turn 1", mockStep{Tools: []mockTool{Write(e.Path("b.txt"), "B\n")}},
		mockStep{Text: "wrote b"})
	c.Model.Script("session A turn 2", mockStep{Tools: []mockTool{Edit(e.Path("a.txt"), "A", "AA")}},
		mockStep{Text: "edited a"})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := c.Command(ctx, "session A turn 1", "--session-id", sa)
	var aErr strings.Builder
	a.Stderr = &aErr
	require.NoError(t, a.Start())
	WaitFile(t, e.Path("a.txt"), time.Minute)
	c.OK("session B turn 1", "--session-id", sb)
	close(gate)
	require.NoError(t, a.Wait(), aErr.String())
	c.OK("session A turn 2", "--resume", sa)

	b := sessionAgent(sb)
	var agents struct {
		Agents []struct {
			ID    string `json:"agent"`
			State string `json:"state"`
		} `json:"agents"`
	}
	e.Venom("checkpoint", "agents", "--json").OK(t).JSON(t, &agents)
	ids := map[string]string{}
	for _, ag := range agents.Agents {
		ids[ag.ID] = ag.State
	}
	assert.Equal(t, map[string]string{"claude": "settled", b: "settled"}, ids)

	// Each turn ended once, by its own session's Stop (with its harness_end).
	ended := map[string]int{}
	for _, r := range e.Records("turn.ended") {
		ended[r["agent"].(string)+"/"+r["turn"].(string)]++
		assert.NotEmpty(t, r["harness_end"], "%v", r)
	}
	assert.Equal(t, map[string]int{"claude/t1": 1, "claude/t2": 1, b + "/t1": 1}, ended)
	assert.Equal(t, map[string][]string{"claude": {"a.txt", "a.txt"}, b: {"b.txt"}}, e.EditsByAgent())

	// Each agent's rollback to before its first turn: its own session's
	// files are its own (class agent); the other session's are another
	// agent's work, outside this one's turns, kept unless the caller
	// chooses (docs/rollback.md#classes, docs/rollback.md#classes), never taken for its own.
	classes := func(agent string) map[string]string { return e.PlanClasses(agent, "k1") }
	assert.Equal(t, map[string]string{"a.txt": "agent", "b.txt": "left outside"}, classes("claude"))
	assert.Equal(t, map[string]string{"a.txt": "left outside", "b.txt": "agent"}, classes(b))
}

// turnEnd is the agent's turn_end checkpoint of turn.
func turnEnd(t *testing.T, e *Env, agent, turn string) ListItem {
	t.Helper()
	for _, c := range e.List(t, "--agent="+agent).Checkpoints {
		if c.Reason == "turn_end" && c.Turn != nil && *c.Turn == turn {
			return c
		}
	}
	t.Fatalf("no turn_end of %s/%s", agent, turn)
	return ListItem{}
}

// slowStopFailure makes the installed StopFailure hook start 10 s
// late, as a capture of a large tree does: Claude Code kills StopFailure
// hooks about 100 ms after `claude -p` exits (2.1.332), so
// the hook never reaches git-venom, every time instead of 3 times in 10.
func slowStopFailure(t *testing.T, e *Env) {
	p := e.Path(".claude/settings.local.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, g := range m["hooks"].(map[string]any)["StopFailure"].([]any) {
		for _, h := range g.(map[string]any)["hooks"].([]any) {
			h.(map[string]any)["command"] = "sleep 10; " + h.(map[string]any)["command"].(string)
		}
	}
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

// TestRealClaude_FailedTurnNeverBlocksARollback: a turn
// whose model call fails, and whose StopFailure hook Claude Code kills,
// stays open in the log; a rollback sees that the process that ran it has
// exited, ends it first (with its turn_end capture and harness_end), and
// goes on, instead of answering conflict.turn_running.
func TestRealClaude_FailedTurnNeverBlocksARollback(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := NewRealClaude(t, e)
	slowStopFailure(t, e)
	sid := newUUID(t)
	c.Model.Script("make a", mockStep{Tools: []mockTool{Write(e.Path("a.txt"), "A\n")}}, mockStep{Text: "made a"})
	c.Model.Script("make b", mockStep{Tools: []mockTool{Write(e.Path("b.txt"), "B\n")}}, mockStep{Fail: true})
	c.OK("make a", "--session-id", sid)
	r := c.Run("make b", "--resume", sid)
	require.Equal(t, "B\n", e.Read("b.txt"), "the failed turn's edit: %s", r.Stderr)

	ended := func() []string {
		var out []string
		for _, r := range e.Records("turn.ended") {
			out = append(out, r["turn"].(string))
		}
		return out
	}
	require.Equal(t, []string{"t1"}, ended(), "the failed turn's end never reached git-venom")
	t1 := turnEnd(t, e, "claude", "t1")

	// The dry run plans as if t2 had ended: b.txt is the agent's own.
	dry := e.DryRun("--agent=claude", "--checkpoint="+t1.Checkpoint)
	classes := map[string]string{}
	for _, f := range dry.Repos[0].Files {
		classes[f.Path] = f.Class
	}
	assert.Equal(t, map[string]string{"b.txt": "agent"}, classes)
	var res RollbackResult
	e.Venom("rollback", "--agent=claude", "--checkpoint="+t1.Checkpoint, "--plan="+dry.Plan, "--json").OK(t).JSON(t, &res)
	assert.Equal(t, []string{"t1", "t2"}, ended(), "the rollback ended t2 first")
	assert.NoFileExists(t, e.Path("b.txt"))
	assert.Equal(t, "A\n", e.Read("a.txt"))
	last := e.Records("turn.ended")[1]
	assert.NotEmpty(t, last["harness_end"], "t2's end was read from its transcript")

	// While a turn's process runs, the refusal names the command that ends it.
	gate := make(chan struct{})
	c.Model.Script("make c", mockStep{Tools: []mockTool{Write(e.Path("c.txt"), "C\n")}}, mockStep{Text: "c", Gate: gate})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "make c", "--resume", sid)
	require.NoError(t, cmd.Start())
	WaitFile(t, e.Path("c.txt"), time.Minute)
	refused := e.Venom("rollback", "--agent=claude", "--checkpoint="+t1.Checkpoint, "--dry-run")
	refused.Fails(t, 5, "conflict.turn_running")
	assert.Contains(t, refused.Stderr, "git venom-checkpoint --agent=claude --reason=turn_end")
	close(gate)
	require.NoError(t, cmd.Wait())
}

// resumeLine is the argv a human rollback's output says resumes the
// rewound conversation; its words need no quoting.
func resumeLine(t *testing.T, out string) []string {
	t.Helper()
	const prefix = "Resume the rewound conversation: "
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, out)
	return nil
}

// humanRollback runs the dry run, then the real call without --json.
func humanRollback(t *testing.T, e *Env, args ...string) string {
	t.Helper()
	plan := e.DryRun(args...).Plan
	return e.Venom("rollback", append(append([]string{}, args...), "--plan="+plan)...).OK(t).Stdout
}

// promptsOf lists the people's prompts the model received in request r.
func promptsOf(r MockRequest) []string {
	var out []string
	for _, m := range r.Messages {
		if p := m.prompt(); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// lastRequestFor is the last main-loop request whose latest prompt holds key.
func lastRequestFor(t *testing.T, m *MockModel, key string) MockRequest {
	t.Helper()
	reqs := m.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		p := promptsOf(reqs[i])
		if len(p) > 0 && strings.Contains(p[len(p)-1], key) {
			return reqs[i]
		}
	}
	t.Fatalf("no request for %q", key)
	return MockRequest{}
}

// TestRealClaude_RewindAndResume with the real program: a turn whose
// transcript ends with a system line after its last assistant line records
// that assistant line as harness_end (docs/checkpoints.md#retention-and-clean);
// a rollback prints the command that resumes the rewound conversation, and
// that command gives the model exactly the kept turn. A rollback to before
// the first turn rewinds to a new, empty session, bound at once, whose
// command starts it with no history.
func TestRealClaude_RewindAndResume(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := NewRealClaude(t, e)
	e.Write(".claude/settings.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo '{\"systemMessage\":\"reviewed\"}'"}]}]}}`)
	e.Commit("project settings")
	sid := newUUID(t)
	c.Model.Script("make a", mockStep{Tools: []mockTool{Write(e.Path("a.txt"), "A\n")}}, mockStep{Text: "made a"})
	c.Model.Script("edit a", mockStep{Tools: []mockTool{Edit(e.Path("a.txt"), "A", "AA"), Bash("echo B > b.txt")}},
		mockStep{Text: "edited a"})
	c.OK("make a", "--session-id", sid)
	c.OK("edit a", "--resume", sid)
	require.Equal(t, "AA\n", e.Read("a.txt"))
	require.Equal(t, "B\n", e.Read("b.txt"))

	// Turn 1's end in the real transcript: its last assistant line, then
	// the system line the other Stop hook's summary left.
	var lastAssistant string
	trailing := false
	data, err := os.ReadFile(c.Transcript(sid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(data), "\n") {
		var line struct {
			Type, UUID, Subtype string
			Message             struct{ Content json.RawMessage }
		}
		if json.Unmarshal([]byte(l), &line) != nil {
			continue
		}
		if strings.Contains(l, `"content":"edit a"`) {
			break
		}
		switch {
		case line.Type == "assistant":
			lastAssistant, trailing = line.UUID, false
		case line.Type == "system" && line.Subtype == "stop_hook_summary":
			trailing = true
		}
	}
	require.NotEmpty(t, lastAssistant)
	require.True(t, trailing, "the real program wrote a system line after turn 1's last assistant line")
	ended := e.Records("turn.ended")
	require.Len(t, ended, 2)
	assert.Equal(t, lastAssistant, ended[0]["harness_end"])

	// Back to the end of turn 1, files and conversation.
	out := humanRollback(t, e, "--agent=claude", "--checkpoint="+turnEnd(t, e, "claude", "t1").Checkpoint)
	argv := resumeLine(t, out)
	require.Equal(t, []string{"claude", "-p", "--resume", sid, "--resume-session-at", lastAssistant, "--fork-session",
		"--session-id"}, argv[:8], out)
	assert.Equal(t, "A\n", e.Read("a.txt"))
	assert.NoFileExists(t, e.Path("b.txt"))
	c.OK("after the rewind", argv[2:]...)
	assert.Equal(t, []string{"make a", "after the rewind"}, promptsOf(lastRequestFor(t, c.Model, "after the rewind")),
		"the model gets turn 1 and the new prompt, not turn 2")

	// Back to before the first turn: a new, empty session.
	out = humanRollback(t, e, "--agent=claude", "--checkpoint=k1")
	argv = resumeLine(t, out)
	require.Len(t, argv, 3, out)
	require.Equal(t, []string{"claude", "--session-id"}, argv[:2])
	assert.NoFileExists(t, e.Path("a.txt"))
	for _, b := range e.Records("agent.binding") {
		assert.NotEmpty(t, b["harness_session"], "no empty binding: %v", b)
	}
	c.OK("from scratch", "--session-id", argv[2])
	assert.Equal(t, []string{"from scratch"}, promptsOf(lastRequestFor(t, c.Model, "from scratch")))
	starts := e.Records("turn.started")
	last := starts[len(starts)-1]
	assert.Equal(t, "claude", last["agent"], "the new session is the same agent's")
	assert.Equal(t, argv[2], last["harness_session"])
}
