package harness

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
)

// Every harness of the list is whole: a name the hook verb and the log can
// carry, a default agent that is a valid id, events to install, and a
// settings file or a plugin file.
func TestKindsAreWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds {
		assert.False(t, seen[k.Name], "two harnesses named %s", k.Name)
		seen[k.Name] = true
		assert.Regexp(t, `^[a-z][a-z0-9-]*$`, k.Name)
		assert.NotEmpty(t, k.Title, k.Name)
		assert.True(t, ids.ValidAgent(k.Agent), "%s: default agent %q", k.Name, k.Agent)
		assert.NotEmpty(t, k.Help, k.Name)
		assert.NotEmpty(t, k.Marks, k.Name)
		assert.NotEmpty(t, k.Events, k.Name)
		assert.True(t, k.Settings != nil || (k.Plugin != nil && k.PluginText != nil && k.PluginOurs != nil), k.Name)
		assert.NotEmpty(t, k.PromptContext, k.Name)
		assert.NotEmpty(t, k.Tested, k.Name)
		assert.Same(t, k, Lookup(k.Name))
	}
	assert.Nil(t, Lookup("none"))
	assert.Equal(t, Or(Names()), NameList())
	assert.Equal(t, "a, b or c", Or([]string{"a", "b", "c"}))
	assert.Equal(t, "a or b", Or([]string{"a", "b"}))
	assert.Equal(t, "a", Or([]string{"a"}))
}

// Hints writes the harness hint of an error with the registry's names,
// in its place among the others, and leaves an error without it alone.
func TestHints(t *testing.T) {
	e := errcode.Newf(errcode.InvalidParamsAgent, nil, "no agent").Hint("first").Hint("%s", agents.HarnessHint).Hint("last")
	Hints(e)
	assert.Equal(t, []string{"first",
		"or let a harness do it: git venom-checkpoint hook install " + Kinds[0].Name,
		"(or " + Or(Names()[1:]) + ")", "last"}, e.Hints)
	other := errcode.Newf(errcode.InvalidParamsAgent, nil, "x").Hint("first")
	Hints(other)
	assert.Equal(t, []string{"first"}, other.Hints)
}

// Each harness's shell is an agent's (docs/checkpoints.md#agents-turns-and-states): the marks it sets in
// the commands it runs. VENOM_CALLER's override is rollback.DetectCaller's.
func TestCallerMarks(t *testing.T) {
	for _, env := range []map[string]string{
		{"CLAUDECODE": "1"}, {"CODEX_THREAD_ID": "x"}, {"CODEX_SANDBOX": "seatbelt"},
		{"CODEX_SANDBOX_NETWORK_DISABLED": "1"}, {"GEMINI_CLI": "1"}, {"OPENCODE": "1", "OPENCODE_PID": "42"}, {"QWEN_CODE": "1"},
	} {
		assert.True(t, IsShell(func(k string) string { return env[k] }), "%v", env)
	}
	for _, env := range []map[string]string{{}, {"CLAUDECODE": "0"}, {"GEMINI_CLI": "0"},
		{"OPENCODE": "1"}, {"OPENCODE_PID": "42"}, {"OPENCODE": "0", "OPENCODE_PID": "42"}, {"QWEN_CODE": "0"},
		{"CODEX_THREAD_ID": ""}} {
		assert.False(t, IsShell(func(k string) string { return env[k] }), "%v", env)
	}
}

// Gemini CLI's event names are mapped onto the ones the hook acts on.
func TestGeminiEventsAreCanonical(t *testing.T) {
	k := Lookup("gemini-cli")
	require.NotNil(t, k)
	for native, canon := range map[string]string{"BeforeAgent": UserPromptSubmit, "AfterAgent": Stop,
		"AfterTool": PostToolUse, "SessionStart": SessionStart} {
		p, err := ParseHook([]byte(`{"hook_event_name":"`+native+`","session_id":"s"}`), k)
		require.NoError(t, err)
		p.Canonical(k)
		assert.Equal(t, canon, p.Event, native)
	}
	in := json.RawMessage(`{"file_path":"/r/a.go","content":"x"}`)
	assert.Equal(t, []string{"/r/a.go"}, k.Edits("write_file", in))
	assert.Equal(t, []string{"/r/a.go"}, k.Edits("replace", in))
	assert.Nil(t, k.Edits("run_shell_command", in))
}

// hook install's --via is the harnesses' own: Codex's ways, its default
// first, said for Codex.
func TestVia_FromTheKinds(t *testing.T) {
	values, help := Via()
	assert.Equal(t, []string{"auto", "hooks", "notify", "both"}, values)
	assert.Equal(t, "Codex: "+Lookup("codex").ViaHelp, help)
	for _, k := range Kinds {
		if k.Name != "codex" {
			assert.Empty(t, k.Via, "%s has a --via", k.Name)
		}
	}
}

// The hook verb's argument is said for the harnesses with a notify
// program, Codex alone.
func TestNotifyHelp_FromTheKinds(t *testing.T) {
	assert.Equal(t, "Codex: notify's agent-turn-complete JSON (Codex appends it).", NotifyHelp())
}
