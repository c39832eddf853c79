package tests

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// geminiPayload is a Gemini CLI hook payload: the base members and the
// event's own.
func (e *Env) geminiPayload(event string, set map[string]any) string {
	e.t.Helper()
	m := map[string]any{"session_id": "5f1e2d3c-0000-4000-8000-00000000abcd", "hook_event_name": event,
		"cwd": e.Dir, "transcript_path": "", "timestamp": "2026-12-01T18:00:00.000Z"}
	for k, v := range set {
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(e.t, err)
	return string(b)
}

// Gemini CLI is a third harness, added as one package and one line of the
// registry: install writes its settings file, its events
// become turns and edits, and its agent rolls back its files.
func TestHookGemini_InstallTurnsEditsAndRollback(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)

	env.Venom("checkpoint", "hook", "install", "gemini-cli").OK(t)
	settings := env.ReadHookSettings(".gemini/settings.json")
	assert.ElementsMatch(t, []string{"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"}, mapKeys(settings.Hooks))
	assert.Equal(t, "write_file|replace", settings.Hooks["AfterTool"][0].Matcher)
	h := settings.Hooks["BeforeAgent"][0].Hooks[0]
	assert.Equal(t, "git venom-checkpoint hook gemini-cli", h.Command)
	assert.Equal(t, 40000, h.Timeout, "Gemini CLI's timeouts are in milliseconds")
	env.Venom("checkpoint", "hook", "uninstall", "gemini-cli").OK(t)
	assert.NoFileExists(t, filepath.Join(env.Dir, ".gemini", "settings.json"), "uninstall removes the file install made")

	env.Hook("gemini-cli", env.geminiPayload("SessionStart", map[string]any{"source": "startup"}))
	env.Hook("gemini-cli", env.geminiPayload("BeforeAgent", map[string]any{"prompt": "write hello"}))
	env.Write("hello.txt", "hello\n")
	env.Hook("gemini-cli", env.geminiPayload("AfterTool", map[string]any{"tool_name": "write_file",
		"tool_input": map[string]any{"file_path": env.Path("hello.txt"), "content": "hello\n"}}))
	env.Write("gen.txt", "by a shell command\n")
	env.Hook("gemini-cli", env.geminiPayload("AfterAgent", map[string]any{"prompt": "write hello", "prompt_response": "done"}))

	reg := env.Records("agent.registered")
	require.Len(t, reg, 1)
	assert.Equal(t, "gemini", reg[0]["agent"], "the harness's default agent")
	assert.Equal(t, "gemini-cli", reg[0]["harness"])
	edits := env.Records("edit.recorded")
	require.Len(t, edits, 1)
	assert.Equal(t, []any{"hello.txt"}, edits[0]["paths"])
	assert.Equal(t, "hello\n", env.Git("show", "refs/venom/checkpoints/gemini/2:hello.txt")+"\n")

	env.Hook("gemini-cli", env.geminiPayload("BeforeAgent", map[string]any{"prompt": "change it"}))
	env.Write("hello.txt", "hello again\n")
	env.Hook("gemini-cli", env.geminiPayload("AfterAgent", map[string]any{"prompt": "change it"}))

	// No rewind: a whole rollback to after a turn is refused with its fix;
	// the files alone go back.
	r := env.Venom("rollback", "--agent=gemini", "--checkpoint=k2", "--dry-run", "--json")
	r.Fails(t, 10, "unsupported.harness_capability")
	assert.Contains(t, string(ErrorOf(t, r).Error.Data), `"fix":"--restore=files"`)
	env.Rollback("--agent=gemini", "--checkpoint=k1", "--restore=files")
	assert.NoFileExists(t, env.Path("hello.txt"))
	assert.NoFileExists(t, env.Path("gen.txt"))

	// The note is Gemini CLI's BeforeAgent additionalContext.
	out := env.Hook("gemini-cli", env.geminiPayload("BeforeAgent", map[string]any{"prompt": "again"}))
	var note hookNote
	out.JSON(t, &note)
	assert.Equal(t, "BeforeAgent", note.HookSpecificOutput.HookEventName)
	assert.Contains(t, note.HookSpecificOutput.AdditionalContext, "rolled back")

	assert.Len(t, env.Records("turn.ended"), 2)

	// A command run by Gemini CLI's shell is an agent's.
	env.VenomIn(env.Dir, []string{"GEMINI_CLI=1"}, "rollback", "--agent=gemini", "--checkpoint=k2",
		"--restore=files", "--plan=p1-0000000000000000").Fails(t, 4, "denied.agent_caller")
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
