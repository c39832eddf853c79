package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The synthetic Claude Code transcript's turn ends (tests/testdata/hooks/claude).
const (
	claudeSession = "7ed25220-ebd9-4d8a-a85d-0225263a02da"
	t1End         = "00000001-0000-4000-8000-000000000006"
	t2End         = "00000002-0000-4000-8000-000000000006"
	t3End         = "00000003-0000-4000-8000-000000000004"
)

func claudeTurn(t *testing.T, env *Env, prompt, end string, edit func()) {
	t.Helper()
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": prompt}))
	edit()
	env.Transcript(claudeSession, end)
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": prompt}))
}

func writeTool(env *Env, prompt, rel string) string {
	return env.Payload("claude/hooks/PostToolUse.Write.json", map[string]any{"prompt_id": prompt,
		"tool_input": map[string]any{"file_path": env.Path(rel), "content": "x"}})
}

func TestHookClaude_TurnsEditsAndHarnessEnds(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".gitignore", "*.log\n")
	env.Commit("ignore logs")
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))

	claudeTurn(t, env, "p1", t1End, func() {
		env.Write("hello.txt", "hello\n")
		env.Hook("claude-code", writeTool(env, "p1", "hello.txt"))
		env.Write("gen/out.txt", "by a shell command\n") // no tool call names it
		env.Write("debug.log", "ignored\n")
		env.Hook("claude-code", writeTool(env, "p1", "debug.log"))
	})
	env.Write("README.md", "a person's edit\n")
	claudeTurn(t, env, "p2", t2End, func() {
		env.Write("hello.txt", "hello world\n")
		env.Hook("claude-code", env.Payload("claude/hooks/PostToolUse.Edit.json", map[string]any{"prompt_id": "p2"}))
		env.Write("nb.ipynb", "{}\n")
		env.Hook("claude-code", env.Payload("claude/hooks/PostToolUse.NotebookEdit.json", map[string]any{"prompt_id": "p2"}))
	})
	claudeTurn(t, env, "p3", t3End, func() {
		env.Write("hello.txt", "hello there\n")
		env.Hook("claude-code", env.Payload("claude/hooks/PostToolUse.MultiEdit.SYNTHETIC.json", map[string]any{"prompt_id": "p3"}))
	})

	binds := env.Records("agent.binding")
	require.Len(t, binds, 1)
	assert.Equal(t, "claude", binds[0]["agent"], "docs/harness.md#hook-agents: the default agent")
	assert.Equal(t, claudeSession, binds[0]["harness_session"])

	reg := env.Records("agent.registered")
	require.Len(t, reg, 1)
	assert.Equal(t, "claude-code", reg[0]["harness"])

	edits := env.Records("edit.recorded")
	require.Len(t, edits, 5)
	assert.Equal(t, []any{"hello.txt"}, edits[0]["paths"])
	assert.Equal(t, []any{}, edits[0]["ignored"])
	assert.Equal(t, "t1", edits[1]["turn"])
	assert.Equal(t, []any{"debug.log"}, edits[1]["ignored"], "an ignored file is named in ignored")
	assert.Equal(t, []any{"nb.ipynb"}, edits[3]["paths"], "NotebookEdit's notebook_path")
	assert.Equal(t, "t3", edits[4]["turn"])

	ends := env.Records("turn.ended")
	require.Len(t, ends, 3)
	for i, want := range []string{t1End, t2End, t3End} {
		assert.Equal(t, want, ends[i]["harness_end"], "turn %d ends at its last chain entry", i+1)
		assert.Equal(t, "2.1.332", ends[i]["harness_version"])
		assert.Equal(t, fmt.Sprintf("p%d", i+1), ends[i]["harness_turn"])
	}

	l := env.List(t, "--agent=claude")
	reasons := []string{}
	for _, c := range l.Checkpoints {
		reasons = append(reasons, c.Checkpoint+":"+c.Reason)
	}
	// t3's turn_start found the tree as t2 left it: reused (docs/checkpoints.md#reuse).
	assert.Equal(t, []string{"k5:turn_end", "k4:turn_end", "k3:turn_start", "k2:turn_end", "k1:turn_start"}, reasons)
	for id, conv := range conversations(l) {
		assert.True(t, conv, "%s can bring its conversation back", id)
	}
	// The person's README edit is in k3 (turn_start of t2), not in k2.
	assert.Equal(t, "hello", env.Git("show", "refs/venom/checkpoints/claude/2:README.md"))
	assert.Equal(t, "a person's edit", env.Git("show", "refs/venom/checkpoints/claude/3:README.md"))
	assert.Equal(t, "by a shell command", env.Git("show", "refs/venom/checkpoints/claude/2:gen/out.txt"))

	// The ignored file an edit tool wrote is named in the plan.
	dry := env.DryRun("--agent=claude", "--checkpoint=k1", "--restore=files", "--outside=keep")
	assert.Equal(t, []string{"debug.log"}, dry.Repos[0].IgnoredEdits)

	// The same Stop again is a no-op.
	before := len(env.LogRecords())
	env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p3"}))
	assert.Len(t, env.LogRecords(), before)
}

func TestHookClaude_InterruptedTurnEndsAtTheNextPrompt(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() {})
	// Turn 2 is interrupted: no Stop. Turn 3's prompt line is in the file.
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p2"}))
	env.Write("half.txt", "half done\n")
	env.Transcript(claudeSession, "00000003-0000-4000-8000-000000000001")
	prompt3 := promptIDOf(t, env, "00000003-0000-4000-8000-000000000001")
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": prompt3}))

	ends := env.Records("turn.ended")
	require.Len(t, ends, 2)
	assert.Equal(t, "t2", ends[1]["turn"])
	assert.Equal(t, "00000002-0000-4000-8000-000000000006", ends[1]["harness_end"],
		"the interrupted turn ends at its last assistant line before the new prompt, not the system line after it")
	starts := env.Records("turn.started")
	require.Len(t, starts, 3)
	assert.Equal(t, "t3", starts[2]["turn"])
	assert.Equal(t, "half done", env.Git("show", "refs/venom/checkpoints/claude/2:half.txt"),
		"the interrupted turn got its turn_end checkpoint")
}

func promptIDOf(t *testing.T, env *Env, uuid string) string {
	b, err := os.ReadFile(filepath.Join(hookData, "claude", "5e55a0b1-7c1d-4e2f-9a3b-0c4d5e6f7a80.jsonl"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"uuid":"`+uuid+`"`) {
			var m struct {
				PromptID string `json:"promptId"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			return m.PromptID
		}
	}
	t.Fatalf("no line %s", uuid)
	return ""
}

func TestHook_NeverBreaksTheHarness(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for _, payload := range []string{"not json", `{"no":"event"}`, ""} {
		r := env.Hook("claude-code", payload)
		assert.Empty(t, r.Stdout)
		assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "one line on stderr: %q", r.Stderr)
		assert.Contains(t, r.Stderr, "invalid_params.hook_payload")
	}
	failed := env.Records("checkpoint.failed")
	require.Len(t, failed, 3)
	assert.Equal(t, "invalid_params.hook_payload", failed[0]["code"])
	assert.Empty(t, env.Records("agent.registered"), "a broken payload registers nothing")

	// An event git-venom does not act on is ignored.
	r := env.Hook("claude-code", env.Payload("claude/hooks/PreToolUse.Write.json", nil))
	assert.Empty(t, r.Stderr)

	// Outside a repository: one line, exit 0.
	r = env.VenomIn(env.Root, nil, "checkpoint", "hook", "codex", `{"type":"agent-turn-complete","thread-id":"x","turn-id":"y"}`)
	r.OK(t)
	assert.Contains(t, r.Stderr, "unsupported.checkpoint_no_repo")

	// A capture that fails: logged as checkpoint.failed, exit 0, the turn still opens.
	env.Extra = []string{"VENOM_TEST_FAIL_AT=log-fsync"}
	r = env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", nil))
	assert.Contains(t, r.Stderr, "failed.state")
	env.Extra = nil
}

func TestHook_ConcurrentHooksLoseNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
	var wg sync.WaitGroup
	const n = 8
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rel := fmt.Sprintf("f%d.txt", i)
			env.Write(rel, "x\n")
			env.Hook("claude-code", writeTool(env, "p1", rel))
		}(i)
	}
	wg.Wait()
	assert.Len(t, env.Records("edit.recorded"), n, "no lost record")

	// Codex's Stop hook and its notify program report the same turn at once.
	cx := NewEnv(t)
	cx.Hook("codex", cx.Payload("codex/hooks/UserPromptSubmit.json", nil))
	cx.Write("hello.txt", "hello\n")
	notify, err := os.ReadFile(filepath.Join(hookData, "codex/hooks/notify.exec.turn1.argv.json"))
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			cx.Hook("codex", cx.Payload("codex/hooks/Stop.turn1.json", nil))
		}()
		go func() {
			defer wg.Done()
			cx.VenomInput("", "checkpoint", "hook", "codex", strings.TrimSpace(string(notify))).OK(t)
		}()
	}
	wg.Wait()
	assert.Len(t, cx.Records("turn.ended"), 1, "one turn_end for one turn")
	assert.Len(t, cx.Records("checkpoint.taken"), 2, "no duplicate checkpoint")
}

func TestHookCodex_HooksAndNotify(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// The rollout the payloads name, where Codex 0.171.0 wrote it.
	rollout, err := os.ReadFile(filepath.Join(hookData, "codex", "rollout-0.171.0-01a22c93-1777-7b03-81d2-cc9f451e14c8.jsonl"))
	require.NoError(t, err)
	sessions := filepath.Join(env.Home, ".codex", "sessions", "2026", "11", "30")
	require.NoError(t, os.MkdirAll(sessions, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sessions,
		"rollout-2026-11-30T13-09-27-01a22c93-1777-7b03-81d2-cc9f451e14c8.jsonl"), rollout, 0o644))
	env.Hook("codex", env.Payload("codex/hooks/SessionStart.startup.json", nil), "--agent=cx")
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", nil), "--agent=cx")
	env.Write("hello.txt", "hello\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.apply_patch.add.json", nil), "--agent=cx")
	env.Write("shell.txt", "hi\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.Bash.json", nil), "--agent=cx")
	env.Hook("codex", env.Payload("codex/hooks/Stop.turn1.json", nil), "--agent=cx")

	// Turn 2 is reported by notify only.
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": "01a22c93-4615-7e41-bfc6-61fc84931e71"}), "--agent=cx")
	env.Write("hello.txt", "hello world\n")
	env.Write("notes/b.txt", "b\n")
	env.Hook("codex", env.Payload("codex/hooks/PostToolUse.apply_patch.update-and-add.json", nil), "--agent=cx")
	notify, err := os.ReadFile(filepath.Join(hookData, "codex/hooks/notify.exec.turn2.argv.json"))
	require.NoError(t, err)
	arg := strings.ReplaceAll(strings.TrimSpace(string(notify)), cxProj, env.Dir)
	env.VenomIn(env.Dir, []string{"VENOM_AGENT=cx"}, "checkpoint", "hook", "codex", arg).OK(t)

	assert.Equal(t, "01a22c93-1777-7b03-81d2-cc9f451e14c8", env.Records("agent.binding")[0]["harness_session"])
	edits := env.Records("edit.recorded")
	require.Len(t, edits, 2)
	assert.Equal(t, []any{"hello.txt"}, edits[0]["paths"])
	assert.Equal(t, []any{"hello.txt", "notes/b.txt"}, edits[1]["paths"], "apply_patch's Update and Add lines")
	ends := env.Records("turn.ended")
	require.Len(t, ends, 2)
	assert.Equal(t, "01a22c93-1812-7df0-9ee4-f5a15fed6464", ends[0]["harness_turn"])
	assert.Equal(t, "0.171.0", ends[0]["harness_version"], "the rollout's cli_version")
	assert.Equal(t, "01a22c93-4615-7e41-bfc6-61fc84931e71", ends[1]["harness_turn"], "notify's turn-id")
	assert.Equal(t, "t2", ends[1]["turn"])
	assert.Nil(t, ends[0]["no_start"])
	for id, conv := range conversations(env.List(t, "--agent=cx")) {
		assert.True(t, conv, id)
	}
}

func TestHook_DeliversTheRollbackNoteOnce(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() { env.Write("a.txt", "1\n") })
	claudeTurn(t, env, "p2", t2End, func() { env.Write("a.txt", "2\n") })
	// A sharer of the tree.
	env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", nil))
	env.Hook("codex", env.Payload("codex/hooks/Stop.turn1.json", nil))
	// The rollback engine is another issue; its final record is what the
	// note follows: a restore=files rollback of claude to k2 (after t1).
	env.AppendLog("rollback.ended", map[string]any{"agent": "claude", "checkpoint": "k2",
		"safety": "k5", "restore": "files", "ok": true, "after": "k6", "drops": []string{}})

	r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p3"}))
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	r.JSON(t, &out)
	assert.Equal(t, "UserPromptSubmit", out.HookSpecificOutput.HookEventName)
	assert.Equal(t, "Note: the files were rolled back to their state after turn t1. Changes made after that point are gone, and what you remember of them may no longer be true. Read the files before you rely on them.",
		out.HookSpecificOutput.AdditionalContext)
	r = env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p4"}))
	assert.Empty(t, r.Stdout, "delivered once")

	r = env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": "t-next"}))
	assert.Contains(t, r.Stdout, "after agent claude's turn t1", "the sharer gets it too")
	r = env.Hook("codex", env.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": "t-next2"}))
	assert.Empty(t, r.Stdout)
	notes := env.Records("note.delivered")
	require.Len(t, notes, 2)
	assert.Equal(t, "claude", notes[0]["agent"])
	assert.Equal(t, "codex", notes[1]["agent"])
}

func TestHook_BoundedByTimeoutAndStopFailure(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
	env.Write("a.txt", "1\n")
	// StopFailure (an API error) ends the turn too.
	env.Hook("claude-code", env.Payload("claude/hooks/StopFailure.json", map[string]any{"prompt_id": "p1",
		"session_id": claudeSession}))
	ends := env.Records("turn.ended")
	require.Len(t, ends, 1)
	assert.Equal(t, "p1", ends[0]["harness_turn"])

	// Another command holds the lock: the hook gives up within venom.timeout,
	// exits 0, and says so on one line.
	env.SetGlobal("venom.timeout", "2s")
	env.StartPaused("capture-scan", nil, "checkpoint", "--agent=other", "--json")
	start := time.Now()
	r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p2"}))
	assert.Less(t, time.Since(start), 15*time.Second)
	assert.Contains(t, r.Stderr, "timeout.checkpoint")
	assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), r.Stderr)
	assert.Empty(t, r.Stdout)
}
