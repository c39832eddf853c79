package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Qwen Code is a harness of its own, one package and one line of the
// registry: install writes .qwen/settings.json in Claude Code's shape,
// with timeouts in seconds; its events, as Qwen Code 0.24.4 sends them
// (tests/testdata/hooks/qwen), become turns and edits. Qwen Code sends
// UserPromptSubmit before every model request of a turn, after each tool
// result too, with the turn's prompt_id: one turn, one turn_start.
func TestHookQwen_InstallTurnsEditsAndRollback(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)

	env.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	settings := env.ReadHookSettings(".qwen/settings.json")
	assert.ElementsMatch(t, []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "StopFailure"},
		mapKeys(settings.Hooks))
	assert.Equal(t, "write_file|edit|notebook_edit", settings.Hooks["PostToolUse"][0].Matcher)
	h := settings.Hooks["UserPromptSubmit"][0].Hooks[0]
	assert.Equal(t, "command", h.Type)
	assert.Equal(t, "git venom-checkpoint hook qwen-code", h.Command)
	assert.Equal(t, 40, h.Timeout, "Qwen Code's command hook timeouts are seconds")
	env.Venom("checkpoint", "hook", "uninstall", "qwen-code").OK(t)
	assert.NoFileExists(t, env.Path(".qwen/settings.json"), "uninstall removes the file install made")
	assert.NoDirExists(t, env.Path(".qwen"))

	hook := func(fixture string, set map[string]any) Result {
		return env.Hook("qwen-code", env.Payload("qwen/hooks/"+fixture+".json", set))
	}
	hook("SessionStart.startup", nil)
	hook("UserPromptSubmit", nil)
	env.Write("a.txt", "A\n")
	hook("PostToolUse.write_file", nil)
	hook("UserPromptSubmit.after-tool", nil)
	env.Write("a.txt", "AA\n")
	hook("PostToolUse.edit", nil)
	hook("UserPromptSubmit.after-tool", nil)
	env.Write("b.txt", "B\n")
	hook("PostToolUse.run_shell_command", nil)
	hook("UserPromptSubmit.after-tool", nil)
	hook("Stop", nil)

	reg := env.Records("agent.registered")
	require.Len(t, reg, 1)
	assert.Equal(t, "qwen", reg[0]["agent"], "the harness's default agent")
	assert.Equal(t, "qwen-code", reg[0]["harness"])
	require.Len(t, env.Records("turn.started"), 1, "the turn's later model requests open no turn")
	edits := env.Records("edit.recorded")
	require.Len(t, edits, 2, "write_file and edit are edits; the shell's file is found by the capture")
	for _, e := range edits {
		assert.Equal(t, []any{"a.txt"}, e["paths"])
		assert.Equal(t, "t1", e["turn"])
	}
	t1 := turnEnd(t, env, "qwen", "t1")
	assert.Equal(t, "B", env.Git("show", "refs/venom/checkpoints/qwen/"+t1.Checkpoint[1:]+":b.txt"))

	// The next prompt of the resumed session is turn 2.
	hook("SessionStart.resume", nil)
	hook("UserPromptSubmit.resume", nil)
	env.Write("a.txt", "A2\n")
	hook("Stop", map[string]any{"prompt_id": "9db0db00-f554-446a-b9fb-1b46a2d6b168########2"})
	assert.Equal(t, []string{"t1", "t2"}, endedTurns(env, "qwen"))

	// No rewind: a whole rollback to after turn 1 is refused with its fix;
	// the files alone go back.
	r := env.Venom("rollback", "--agent=qwen", "--checkpoint="+t1.Checkpoint, "--dry-run", "--json")
	r.Fails(t, 10, "unsupported.harness_capability")
	assert.Contains(t, string(ErrorOf(t, r).Error.Data), `"fix":"--restore=files"`)
	env.Rollback("--agent=qwen", "--checkpoint="+t1.Checkpoint, "--restore=files")
	assert.Equal(t, "AA\n", env.Read("a.txt"))

	// The note is UserPromptSubmit's additionalContext, once: the turn's
	// next model request gets none.
	next := map[string]any{"prompt_id": "9db0db00-f554-446a-b9fb-1b46a2d6b168########3"}
	var note hookNote
	hook("UserPromptSubmit", next).JSON(t, &note)
	assert.Equal(t, "UserPromptSubmit", note.HookSpecificOutput.HookEventName)
	assert.Contains(t, note.HookSpecificOutput.AdditionalContext, "rolled back to their state after turn t1")
	assert.Empty(t, hook("UserPromptSubmit.after-tool", next).Stdout)

	// A command run by Qwen Code's shell tool is an agent's.
	env.VenomIn(env.Dir, []string{"QWEN_CODE=1"}, "rollback", "--agent=qwen", "--checkpoint="+t1.Checkpoint,
		"--restore=files", "--plan=p1-0000000000000000").Fails(t, 4, "denied.agent_caller")
}

// Qwen Code adds "$version": 4 to every settings file it reads without
// one. A file install creates has it already, first, so that Qwen Code
// leaves the file as install wrote it, and uninstall removes the file
// (and .qwen) when nothing else is left; a person's file gets no stamp
// from install.
func TestHookQwen_NewSettingsCarryQwensVersion(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	assert.True(t, strings.HasPrefix(env.Read(".qwen/settings.json"), "{\n  \"$version\": 4,\n  \"hooks\": {\n"),
		env.Read(".qwen/settings.json"))
	env.Venom("checkpoint", "hook", "uninstall", "qwen-code").OK(t)
	assert.NoDirExists(t, env.Path(".qwen"))

	mine := "{\n  \"model\": {\"name\": \"qwen3-coder-plus\"}\n}\n"
	env.Write(".qwen/settings.json", mine)
	env.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	assert.NotContains(t, env.Read(".qwen/settings.json"), "$version")
	env.Venom("checkpoint", "hook", "uninstall", "qwen-code").OK(t)
	assert.Equal(t, mine, env.Read(".qwen/settings.json"))
}

// Qwen Code reads a command hook timeout of 1000 or more as milliseconds
// (its timeouts once were): a venom.timeout that long is written in
// milliseconds, so the hook gets its seconds and not a thousandth.
func TestHookQwen_LongTimeoutIsWrittenInMilliseconds(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.timeout", "989s")
	env.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	assert.Equal(t, 999, env.ReadHookSettings(".qwen/settings.json").Hooks["Stop"][0].Hooks[0].Timeout)
	env.SetGlobal("venom.timeout", "990s")
	env.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	assert.Equal(t, 1000000, env.ReadHookSettings(".qwen/settings.json").Hooks["Stop"][0].Hooks[0].Timeout)
}

// doctor's harness.qwen-code.hooks, end to end: a qwen-code agent with
// no hooks installed warns with the install command; installed hooks are
// ok, unless Qwen Code would run none of them: --safe-mode's variable in
// the environment, or the repository's file while folder trust is on and
// the worktree is not trusted.
func TestDoctorQwen_WarnsWhenQwenRunsNoHook(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("qwen-code", env.Payload("qwen/hooks/UserPromptSubmit.json", nil))
	env.Hook("qwen-code", env.Payload("qwen/hooks/Stop.json", nil))
	c := env.doctorCheck(t, "harness.qwen-code.hooks")
	assert.Equal(t, "warn", c["status"])
	assert.Equal(t, "git venom-checkpoint hook install qwen-code", c["fix"])

	env.Venom("checkpoint", "hook", "install", "qwen-code").OK(t)
	assert.Equal(t, "ok", env.doctorCheck(t, "harness.qwen-code.hooks")["status"])

	home := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Join(env.Home, ".qwen"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(env.Home, ".qwen", name), []byte(text), 0o644))
	}
	home("settings.json", `{"security": {"folderTrust": {"enabled": true}}}`)
	c = env.doctorCheck(t, "harness.qwen-code.hooks")
	assert.Equal(t, "warn", c["status"])
	assert.Contains(t, c["message"], "is not trusted")
	home("trustedFolders.json", `{"`+env.Dir+`": "TRUST_FOLDER"}`)
	assert.Equal(t, "ok", env.doctorCheck(t, "harness.qwen-code.hooks")["status"])

	env.Extra = append(env.Extra, "QWEN_CODE_SAFE_MODE=true")
	assert.Contains(t, env.doctorCheck(t, "harness.qwen-code.hooks")["message"], "QWEN_CODE_SAFE_MODE")
}
