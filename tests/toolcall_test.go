package tests

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/git-venom/git-venom/lib/explain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bashTool is a Claude Code PostToolUse payload of a Bash call.
func bashTool(env *Env, prompt, command string) string {
	return env.Payload("claude/hooks/PostToolUse.Write.json", map[string]any{"prompt_id": prompt,
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "x"},
		"tool_response": map[string]any{"stdout": "", "stderr": "", "interrupted": false},
		"tool_use_id":   "toolu_" + strings.Fields(command)[0]})
}

// perToolTurn runs one Claude Code turn whose hooks mark tool calls.
func perToolTurn(t *testing.T, env *Env, prompt, end string, calls func()) {
	t.Helper()
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": prompt}), "--per-tool")
	calls()
	env.Transcript(claudeSession, end)
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": prompt}), "--per-tool")
}

// docs/checkpoints.md#tool-calls: with --per-tool each tool call that
// changed the tree is captured under its turn, with its tool and command;
// one that changed nothing records nothing.
func TestToolCalls_MarkedUnderTheirTurn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.go", "package a\n\nvar x = 1\n")
	env.Commit("a")
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil), "--per-tool")
	perToolTurn(t, env, "p1", t1End, func() {
		env.Write("a.go", "package a\n\nvar y = 1\n")
		env.Hook("claude-code", bashTool(env, "p1", "sed -i 's/x/y/' a.go\necho done"), "--per-tool")
		env.Hook("claude-code", bashTool(env, "p1", "ls -la"), "--per-tool") // reads only
		env.Write("b.txt", "new\n")
		env.Hook("claude-code", writeTool(env, "p1", "b.txt"), "--per-tool")
	})

	marks := env.Records("tool.marked")
	require.Len(t, marks, 2, "the call that changed nothing left no mark")
	assert.Equal(t, "t1.1", marks[0]["mark"])
	assert.Equal(t, "t1", marks[0]["turn"])
	assert.Equal(t, "Bash", marks[0]["tool"])
	assert.Equal(t, "sed -i 's/x/y/' a.go", marks[0]["command"], "a shell command's first line")
	assert.Equal(t, "toolu_sed", marks[0]["tool_use_id"])
	assert.Equal(t, "t1.2", marks[1]["mark"])
	assert.Equal(t, "Write", marks[1]["tool"])
	assert.Equal(t, "b.txt", marks[1]["command"], "an edit tool's path, relative to the tree")

	// Each mark's commit holds the tree just after its call, and its ref
	// keeps it.
	c1 := marks[0]["repos"].([]any)[0].(map[string]any)["commit"].(string)
	c2 := marks[1]["repos"].([]any)[0].(map[string]any)["commit"].(string)
	assert.Equal(t, "package a\n\nvar y = 1", env.Git("show", c1+":a.go"))
	assert.NotEqual(t, 0, env.GitRaw("cat-file", "-e", c1+":b.txt").Code, "b.txt came after t1.1")
	assert.Equal(t, "new", env.Git("show", c2+":b.txt"))
	assert.Equal(t, c1, env.Git("rev-parse", "refs/venom/tools/claude/1/1"))
	assert.Equal(t, c2, env.Git("rev-parse", "refs/venom/tools/claude/1/2"))
	assert.Equal(t, env.Git("rev-parse", "HEAD"), env.Git("rev-parse", c1+"^"), "its parent is HEAD, as a checkpoint's")

	// No checkpoint number of its own: the turn's two checkpoints only.
	l := env.List(t, "--agent=claude")
	require.Len(t, l.Checkpoints, 2)
	env.AssertSeqGapless(t)
	require.Empty(t, strings.TrimSpace(env.Git("fsck", "--no-dangling")))
}

// Without --per-tool, a Bash call leaves no mark.
func TestToolCalls_NoneWithoutPerTool(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() {
		env.Write("a.txt", "a\n")
		env.Hook("claude-code", bashTool(env, "p1", "echo a > a.txt"))
		env.Hook("claude-code", writeTool(env, "p1", "a.txt"))
	})
	assert.Empty(t, env.Records("tool.marked"))
	assert.Empty(t, strings.TrimSpace(env.Git("for-each-ref", "refs/venom/tools/")))
}

// hook install --per-tool runs the hook after Bash calls too, and puts
// --per-tool in its command; uninstall takes it all back.
func TestToolCalls_InstallPerTool(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	env.Venom("checkpoint", "hook", "install", "claude-code", "--per-tool").OK(t)
	s := env.Read(".claude/settings.local.json")
	assert.Contains(t, s, `"matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit"`)
	assert.Equal(t, 5, strings.Count(s, "git venom-checkpoint hook claude-code --per-tool"), s)
	assert.NotContains(t, s, `"matcher": "Write|Edit`, "the plain install's entry was replaced")
	env.Venom("checkpoint", "hook", "uninstall", "claude-code").OK(t)
	assert.NoFileExists(t, env.Path(".claude/settings.local.json"))
}

// The real Claude Code program, its hooks installed with --per-tool, runs
// one turn in which the mock model makes two Bash calls and one that only
// reads: each call that changed the tree is marked under the turn, with
// its command as Claude Code ran it.
func TestRealClaude_PerToolMarksEachBashCall(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Write("a.txt", "x one\n")
	e.Commit("a")
	c := NewRealClaude(t, e)
	e.Venom("checkpoint", "hook", "install", "claude-code", "--per-tool").OK(t)
	c.Model.Script("two shell edits",
		mockStep{Tools: []mockTool{Bash("sed -i 's/x/y/' a.txt")}},
		mockStep{Tools: []mockTool{Bash("cat a.txt")}},
		mockStep{Tools: []mockTool{Bash("printf 'b\\n' > b.txt")}},
		mockStep{Text: "done"})
	c.OK("two shell edits")
	require.Equal(t, "y one", e.Read("a.txt")[:5])

	marks := e.Records("tool.marked")
	require.Len(t, marks, 2, "cat changed nothing")
	for i, want := range []string{"sed -i 's/x/y/' a.txt", "printf 'b\\n' > b.txt"} {
		assert.Equal(t, fmt.Sprintf("t1.%d", i+1), marks[i]["mark"])
		assert.Equal(t, "t1", marks[i]["turn"])
		assert.Equal(t, "Bash", marks[i]["tool"])
		assert.Equal(t, want, marks[i]["command"])
		assert.NotEmpty(t, marks[i]["tool_use_id"])
	}
	c1 := marks[0]["repos"].([]any)[0].(map[string]any)["commit"].(string)
	assert.Equal(t, "y one", e.Git("show", c1+":a.txt"))
	assert.NotEqual(t, 0, e.GitRaw("cat-file", "-e", c1+":b.txt").Code, "b.txt came with the second call")
	assert.Equal(t, c1, e.Git("rev-parse", "refs/venom/tools/claude/1/1"))
	l := e.List(t, "--agent=claude")
	require.Len(t, l.Checkpoints, 2, "the turn's start and end; the marks have no number")

	// Blame names the call that wrote each line; the rollback to just
	// before the second call takes b.txt away and keeps a.txt as sed left it.
	var b toolBlame
	e.Venom("diff", "--blame", "b.txt", "--json").OK(t).JSON(t, &b)
	require.Len(t, b.Lines, 1)
	require.NotNil(t, b.Lines[0].Turn)
	assert.Equal(t, "claude/t1.2", *b.Lines[0].Turn)
	assert.Contains(t, e.Venom("diff", "--blame", "a.txt").OK(t).Stdout, "t1 · Bash: sed -i 's/x/y/' a.txt")
	e.Rollback("--agent=claude", "t1.2")
	assert.NoFileExists(t, e.Path("b.txt"))
	assert.Equal(t, "y one\n", e.Read("a.txt"))
}

// Codex's and Gemini CLI's tool-call hooks mark a shell call the same
// way, from their own payloads (recorded for Codex, hand-made for Gemini
// CLI); install widens their matchers to the shell tool.
func TestToolCalls_CodexAndGeminiShellCalls(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", nil), "--agent=cx", "--per-tool")
	env.Write("shell.txt", "hi\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.Bash.json", nil), "--agent=cx", "--per-tool")
	env.Hook("codex", env.Payload("codex/hooks/Stop.turn1.json", nil), "--agent=cx", "--per-tool")

	env.Hook("gemini-cli", env.geminiPayload("BeforeAgent", map[string]any{"prompt": "p"}), "--agent=gm", "--per-tool")
	env.Write("g.txt", "g\n")
	env.Hook("gemini-cli", env.geminiPayload("AfterTool", map[string]any{"tool_name": "run_shell_command",
		"tool_input": map[string]any{"command": "echo g > g.txt"}}), "--agent=gm", "--per-tool")
	env.Hook("gemini-cli", env.geminiPayload("AfterAgent", nil), "--agent=gm", "--per-tool")

	marks := env.Records("tool.marked")
	require.Len(t, marks, 2)
	assert.Equal(t, []any{"cx", "t1.1", "Bash", "env | grep ^CODEX > codex-env.txt; echo hi > shell.txt"},
		[]any{marks[0]["agent"], marks[0]["mark"], marks[0]["tool"], marks[0]["command"]})
	assert.Equal(t, []any{"gm", "t1.1", "run_shell_command", "echo g > g.txt"},
		[]any{marks[1]["agent"], marks[1]["mark"], marks[1]["tool"], marks[1]["command"]})

	env.Venom("checkpoint", "hook", "install", "codex", "--via=hooks", "--per-tool").OK(t)
	assert.Contains(t, env.Read(".codex/hooks.json"), `"matcher": "^(apply_patch|Bash)$"`)
	env.Venom("checkpoint", "hook", "install", "gemini-cli", "--per-tool").OK(t)
	assert.Contains(t, env.Read(".gemini/settings.json"), `"matcher": "write_file|replace|run_shell_command"`)
}

// blameOf is git venom-diff --blame <path> --json.
type toolBlame struct {
	Lines []struct {
		Line int     `json:"line"`
		By   string  `json:"by"`
		Turn *string `json:"turn"`
	} `json:"lines"`
	Turns []explain.Turn `json:"turns"`
}

// Blame and explain name the tool call that wrote a line, list --tools
// shows the calls among the checkpoints; a running turn's calls count
// too, and what a turn changed after its last marked call is the turn's.
func TestToolCalls_BlameExplainAndList(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.go", "package a\n\nvar x = 1\n")
	env.Commit("a")
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil), "--per-tool")
	perToolTurn(t, env, "p1", t1End, func() {
		env.Write("a.go", "package a\n\nvar y = 1\n")
		env.Hook("claude-code", bashTool(env, "p1", "sed -i 's/x/y/' a.go"), "--per-tool")
		env.Write("a.go", "package a\n\nvar y = 1\nvar z = 2\n")
		env.Hook("claude-code", bashTool(env, "p1", "echo 'var z = 2' >> a.go"), "--per-tool")
		env.Write("a.go", "// a\npackage a\n\nvar y = 1\nvar z = 2\n") // no hook saw it
	})
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p2"}), "--per-tool")
	env.Write("a.go", "// a\npackage a\n\nvar y = 1\nvar z = 3\n")
	env.Hook("claude-code", bashTool(env, "p2", "sed -i s/2/3/ a.go"), "--per-tool")

	var b toolBlame
	env.Venom("diff", "--blame", "a.go", "--json").OK(t).JSON(t, &b)
	by := []string{}
	for _, l := range b.Lines {
		if l.Turn != nil {
			by = append(by, *l.Turn)
		} else {
			by = append(by, l.By)
		}
	}
	assert.Equal(t, []string{"claude/t1", "commit", "commit", "claude/t1.1", "claude/t2.1"}, by)
	tools := map[string]explain.Turn{}
	for _, tu := range b.Turns {
		tools[tu.ID] = tu
	}
	require.NotNil(t, tools["claude/t1.1"].Tool)
	assert.Equal(t, explain.Tool{Call: "t1.1", Name: "Bash", Command: "sed -i 's/x/y/' a.go",
		At: tools["claude/t1.1"].Tool.At}, *tools["claude/t1.1"].Tool)
	assert.Equal(t, "k1", tools["claude/t1.1"].Start)
	assert.Equal(t, "t1.1", tools["claude/t1.1"].End)
	assert.Nil(t, tools["claude/t1"].Tool, "the line no marked call wrote is the turn's")
	assert.Equal(t, "t1.2", tools["claude/t1"].Start)
	assert.Equal(t, "t2.1", tools["claude/t2.1"].Tool.Call, "a running turn's call")

	text := env.Venom("diff", "--blame", "a.go").OK(t).Stdout
	assert.Contains(t, text, "t1 · Bash: sed -i 's/x/y/' a.go")
	assert.Regexp(t, `claude/t1.1 \(claude-code +\d{4}-\d\d-\d\d \d\d:\d\d 4\) var y = 1`, text)
	// t2 has not ended: its line says so, where an ended turn has its end.
	assert.Regexp(t, `claude/t2.1 \(claude-code +running +5\) var z = 3`, text)

	// The turn's second call's line, committed: explain names that call.
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p2"}), "--per-tool")
	env.Git("checkout", "-q", "--", "a.go")
	env.Write("a.go", "package a\n\nvar y = 1\nvar z = 2\n")
	env.Commit("work")
	ex := env.Venom("checkpoint", "explain", "HEAD").OK(t).Stdout
	assert.Contains(t, ex, "claude/t1.1")
	assert.Contains(t, ex, "tool t1 · Bash: sed -i 's/x/y/' a.go")
	assert.Contains(t, ex, "tool t1 · Bash: echo 'var z = 2' >> a.go")

	var l struct {
		Checkpoints []struct {
			Checkpoint string `json:"checkpoint"`
		} `json:"checkpoints"`
		Tools []struct {
			Call, Turn, Tool, Command, At, Commit string
		} `json:"tools"`
	}
	env.Venom("checkpoint", "list", "--agent=claude", "--tools", "--json").OK(t).JSON(t, &l)
	calls := []string{}
	for _, c := range l.Tools {
		calls = append(calls, c.Call+" "+c.Tool+" "+c.Command)
	}
	assert.Equal(t, []string{"t2.1 Bash sed -i s/2/3/ a.go", "t1.2 Bash echo 'var z = 2' >> a.go",
		"t1.1 Bash sed -i 's/x/y/' a.go"}, calls)
	env.Venom("checkpoint", "list", "--agent=claude", "--turn=t1", "--tools", "--json").OK(t).JSON(t, &l)
	assert.Len(t, l.Tools, 2)
	table := env.Venom("checkpoint", "list", "--agent=claude", "--tools").OK(t).Stdout
	rows := []string{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		rows = append(rows, strings.Fields(line)[0])
	}
	assert.Equal(t, []string{"k3", "t2.1", "k2", "t1.2", "t1.1", "k1"}, rows, table) // t2 started from k2, reused
	assert.Contains(t, table, "sed -i 's/x/y/' a.go")
	plain := env.Venom("checkpoint", "list", "--agent=claude").OK(t).Stdout
	assert.NotContains(t, plain, "t1.1", "only with --tools")
}

// A rollback can go to just before a tool call (docs/rollback.md#tool-calls):
// t1.2 is the tree t1.1 left, t1.1 the turn's start; files only; what the
// turn changed after that point is the turn's, a person's later edit is
// still outside; the note names the call; --undo comes back.
func TestToolCalls_RollbackToJustBeforeACall(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.go", "package a\n\nvar x = 1\n")
	env.Commit("a")
	head := env.Git("rev-parse", "HEAD")
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil), "--per-tool")
	perToolTurn(t, env, "p1", t1End, func() {
		env.Write("a.go", "package a\n\nvar y = 1\n")
		env.Hook("claude-code", bashTool(env, "p1", "sed -i s/x/y/ a.go"), "--per-tool")
		env.Write("b.txt", "b\n")
		env.Hook("claude-code", bashTool(env, "p1", "echo b > b.txt"), "--per-tool")
		env.Write("a.go", "package a\n\nvar y = 2\n")
		env.Hook("claude-code", bashTool(env, "p1", "sed -i s/1/2/ a.go"), "--per-tool")
	})
	afterT1 := env.RecipeTree()

	plan := env.DryRun("--agent=claude", "t1.2")
	assert.Equal(t, "t1.2", plan.Checkpoint)
	assert.Equal(t, "files", plan.Restore, "files only")
	assert.False(t, plan.Conversation.Rewinds)
	assert.Equal(t, map[string]string{"a.go": "turn", "b.txt": "turn"}, plan.Classes(),
		"what the turn did after t1.1 is the turn's, not an outside edit")
	res := env.Rollback("--agent=claude", "t1.2")
	require.NotNil(t, res.Exact)
	assert.True(t, *res.Exact)
	assert.Equal(t, "package a\n\nvar y = 1\n", env.Read("a.go"), "as t1.1 left it")
	assert.NoFileExists(t, env.Path("b.txt"))
	assert.Equal(t, head, env.Git("rev-parse", "HEAD"))
	started := env.Records("rollback.started")
	require.Len(t, started, 1)
	assert.Equal(t, "t1.2", started[0]["checkpoint"])

	// The note tells the agent where its files went.
	out := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p2"}), "--per-tool").Stdout
	assert.Contains(t, out, "just before your tool call t1.2 (turn t1)")
	env.Transcript(claudeSession, t1End)
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p2"}), "--per-tool")

	env.Rollback("--agent=claude", "--undo")
	assert.Equal(t, afterT1, env.RecipeTree(), "the undo brought the turn's end back")

	// Some paths only: a.go goes back to just before t1.3, b.txt stays.
	env.Rollback("--agent=claude", "t1.3", "--path=a.go")
	assert.Equal(t, "package a\n\nvar y = 1\n", env.Read("a.go"))
	assert.Equal(t, "b\n", env.Read("b.txt"))
	env.Rollback("--agent=claude", "--undo")
	assert.Equal(t, afterT1, env.RecipeTree())

	// t1.1 is the turn's start; a person's edit since is outside.
	env.Write("c.txt", "mine\n")
	assert.Equal(t, map[string]string{"a.go": "turn", "b.txt": "turn", "c.txt": "left outside"},
		env.PlanClasses("claude", "t1.1"))
	env.Venom("rollback", "--agent=claude", "t1.1", "--dry-run", "--json").Fails(t, 5, "conflict.outside_edits")
	env.Rollback("--agent=claude", "t1.1", "--outside=keep")
	assert.Equal(t, "package a\n\nvar x = 1\n", env.Read("a.go"))
	assert.Equal(t, "mine\n", env.Read("c.txt"))

	env.Venom("rollback", "--agent=claude", "t1.2", "--restore=all", "--dry-run").Fails(t, 2, "invalid_params.usage")
	env.Venom("rollback", "--agent=claude", "t1.9", "--dry-run").Fails(t, 3, "not_found.checkpoint")
	env.Venom("rollback", "--agent=claude", "t1.0", "--dry-run").Fails(t, 2, "invalid_params.checkpoint")
	// The diff from just before t1.2 to t1's end: what t1.2 and t1.3 did.
	var d struct {
		Files []struct{ Path string } `json:"files"`
	}
	env.Venom("diff", "--agent=claude", "t1.2", "t1", "--json").OK(t).JSON(t, &d)
	require.Len(t, d.Files, 2)
}

// clean takes the agent's tool-call refs with its checkpoints; a killed
// hook's ref no record names stays (docs/checkpoints.md#tool-calls).
func TestToolCalls_CleanRemovesTheirRefs(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil), "--per-tool")
	perToolTurn(t, env, "p1", t1End, func() {
		env.Write("a.txt", "a\n")
		env.Hook("claude-code", bashTool(env, "p1", "echo a > a.txt"), "--per-tool")
		env.Write("b.txt", "b\n")
		env.Hook("claude-code", bashTool(env, "p1", "echo b > b.txt"), "--per-tool")
	})
	head := env.Git("rev-parse", "HEAD")
	env.Git("update-ref", "refs/venom/tools/other/1/1", head)
	require.Len(t, strings.Fields(env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/claude/")), 2)
	env.Venom("checkpoint", "clean", "--agent=claude").OK(t)
	assert.Empty(t, env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/claude/"))
	assert.Equal(t, "refs/venom/tools/other/1/1", env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/"))
}

// A prune that takes a turn's end takes its tool-call refs too, and
// list --tools stops showing them.
func TestToolCalls_PrunedWithTheirTurnsEnd(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.keep", "2")
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil), "--per-tool")
	for i, p := range []string{"p1", "p2", "p3"} {
		perToolTurn(t, env, p, t1End, func() {
			env.Write("a.txt", fmt.Sprintf("%d\n", i))
			env.Hook("claude-code", bashTool(env, p, fmt.Sprintf("echo %d > a.txt", i)), "--per-tool")
			env.Write("a.txt", fmt.Sprintf("%d again\n", i))
		})
		if i == 0 {
			require.Equal(t, "refs/venom/tools/claude/1/1",
				env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/"))
		}
	}
	pruned := env.Records("checkpoint.pruned")
	require.NotEmpty(t, pruned)
	// Each turn started from the previous one's end (reused): k3 and k4,
	// t2's end and t3's, are the two kept.
	assert.Equal(t, "refs/venom/tools/claude/2/1\nrefs/venom/tools/claude/3/1",
		env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/"), "t1's end was pruned, and its call with it")
	var l struct {
		Tools []struct{ Call string } `json:"tools"`
	}
	env.Venom("checkpoint", "list", "--agent=claude", "--tools", "--json").OK(t).JSON(t, &l)
	require.Len(t, l.Tools, 2)
	assert.Equal(t, "t2.1", l.Tools[1].Call)
	env.Venom("rollback", "--agent=claude", "t1.1", "--dry-run").Fails(t, 3, "not_found.checkpoint")
}

// A hook killed between a marked call's ref and its tool.marked record
// leaves a ref no record names. The write order stays (a record must
// never name a commit no ref holds: the capture's pack is held only
// until the command ends): the next mark passes over its number, doctor
// names it with the command that deletes it, and it goes with its turn:
// a prune that takes the turn's end deletes it, and so does clean.
func TestToolCalls_OrphanRefOfAKilledHook(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"prune", "clean"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			if how == "prune" {
				env.SetGlobal("venom.keep", "2")
			}
			env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil), "--per-tool")
			perToolTurn(t, env, "p1", t1End, func() {
				env.Write("a.txt", "a\n")
				payload := bashTool(env, "p1", "echo a > a.txt")
				p := env.pauseCmd("tool-ref-made", nil, func(extra []string) *exec.Cmd {
					c := env.Command(extra, "checkpoint", "hook", "claude-code", "--per-tool")
					c.Stdin = strings.NewReader(payload)
					return c
				})
				Kill9(t, p.cmd)
				env.Write("b.txt", "b\n")
				env.Hook("claude-code", bashTool(env, "p1", "echo b > b.txt"), "--per-tool")
			})
			marks := env.Records("tool.marked")
			require.Len(t, marks, 1)
			require.Equal(t, "t1.2", marks[0]["mark"], "the killed hook's number is passed over")
			orphan := "refs/venom/tools/claude/1/1"
			require.Equal(t, orphan+"\nrefs/venom/tools/claude/1/2",
				env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/"))
			f := env.GitRaw("fsck", "--no-dangling", "--no-progress")
			require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)

			d := env.Venom("checkpoint", "doctor", "--json")
			var doc struct {
				Checks []struct{ ID, Status, Message, Fix string } `json:"checks"`
			}
			d.JSON(t, &doc)
			found := false
			for _, c := range doc.Checks {
				if c.ID == "checkpoints.refs" {
					found = true
					assert.Equal(t, "warn", c.Status, c.Message)
					assert.Contains(t, c.Message, "1 no log record names: "+orphan)
					assert.Contains(t, c.Fix, "git update-ref -d "+orphan+" "+env.Git("rev-parse", orphan))
				}
			}
			require.True(t, found)

			if how == "prune" {
				for _, p := range []string{"p2", "p3"} {
					perToolTurn(t, env, p, t1End, func() { env.Write("a.txt", p+"\n") })
				}
				require.NotEmpty(t, env.Records("checkpoint.pruned"))
			} else {
				env.Venom("checkpoint", "clean", "--agent=claude").OK(t)
			}
			assert.Empty(t, env.Git("for-each-ref", "--format=%(refname)", "refs/venom/tools/"),
				"t1's calls, the orphan among them, went with its end")
			assert.Equal(t, "ok", env.doctorChecks(t)["checkpoints.refs"])
		})
	}
}
