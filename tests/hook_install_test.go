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

// settingsWithOtherHooks is a settings file as Claude Code writes it
// (JSON.stringify(v, null, 2)), with hooks and settings of its own.
const settingsWithOtherHooks = `{
  "permissions": {
    "allow": [
      "Bash(npm test:*)"
    ]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \"$CLAUDE_FILE_PATHS\""
          }
        ]
      }
    ],
    "Notification": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send claude <done>"
          }
        ]
      }
    ]
  },
  "model": "sonnet"
}
`

func TestHookInstall_ClaudeKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	path := env.Path(".claude/settings.local.json")
	env.Write(".claude/settings.local.json", settingsWithOtherHooks)

	dry := env.Venom("checkpoint", "hook", "install", "claude-code", "--dry-run").OK(t)
	assert.Equal(t, settingsWithOtherHooks, env.Read(".claude/settings.local.json"), "a dry run writes nothing")

	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	once := env.Read(".claude/settings.local.json")
	assert.Equal(t, namedLine("Would change "+path+" to:", "Would change this file to what follows:", path)+"\n"+once,
		dry.Stdout, "--dry-run named the file and printed what it becomes")
	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	assert.Equal(t, once, env.Read(".claude/settings.local.json"), "twice in a row gives the same file")

	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(once), &got))
	var orig map[string]any
	require.NoError(t, json.Unmarshal([]byte(settingsWithOtherHooks), &orig))
	assert.Equal(t, orig["permissions"], got["permissions"])
	assert.Equal(t, orig["model"], got["model"])
	hooks := got["hooks"].(map[string]any)
	origHooks := orig["hooks"].(map[string]any)
	assert.Equal(t, origHooks["Notification"], hooks["Notification"])
	post := hooks["PostToolUse"].([]any)
	require.Len(t, post, 2)
	assert.Equal(t, origHooks["PostToolUse"].([]any)[0], post[0], "the other PostToolUse group is untouched")
	assert.Equal(t, "Write|Edit|MultiEdit|NotebookEdit", post[1].(map[string]any)["matcher"])
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "StopFailure"} {
		groups := hooks[ev].([]any)
		require.Len(t, groups, 1, ev)
		h := groups[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
		assert.Equal(t, "command", h["type"])
		assert.Equal(t, "git venom-checkpoint hook claude-code", h["command"])
		assert.Nil(t, groups[0].(map[string]any)["matcher"], "%s takes no matcher", ev)
	}
	assert.True(t, strings.HasPrefix(once, "{\n  \"permissions\""), "key order and indentation kept")

	env.Venom("checkpoint", "hook", "uninstall", "claude-code").OK(t)
	assert.Equal(t, settingsWithOtherHooks, env.Read(".claude/settings.local.json"), "uninstall restores the original bytes")

	// With --agent, on no file at all: created, then removed again.
	env.Remove(".claude")
	env.Venom("checkpoint", "hook", "install", "claude-code", "--agent=a1", "--isolation=worktree").OK(t)
	assert.Contains(t, env.Read(".claude/settings.local.json"), `"git venom-checkpoint hook claude-code --agent=a1 --isolation=worktree"`)
	env.Venom("checkpoint", "hook", "uninstall", "claude-code").OK(t)
	_, err := os.Stat(path)
	assert.True(t, os.IsNotExist(err), "the file install created is gone")

	// --scope=user writes ~/.claude/settings.json.
	env.Venom("checkpoint", "hook", "install", "claude-code", "--scope=user").OK(t)
	_, err = os.Stat(filepath.Join(env.Home, ".claude", "settings.json"))
	assert.NoError(t, err)
	// A file that is not JSON is refused, and left alone.
	env.Write(".claude/settings.json", "{oops")
	env.Venom("checkpoint", "hook", "install", "claude-code", "--scope=project", "--json").Fails(t, 2, "invalid_params.config")
	assert.Equal(t, "{oops", env.Read(".claude/settings.json"))
}

const codexConfig = `# my codex config
model = "gpt-5.5"
approval_policy = "never"

[model_providers.mock]
name = "mock"
`

func TestHookInstall_Codex(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	orig, err := os.ReadFile(filepath.Join(hookData, "codex", "hooks", "hooks.json.as-tested"))
	require.NoError(t, err)
	env.Write(".codex/hooks.json", string(orig))
	userConfig := filepath.Join(env.Home, ".codex", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(userConfig), 0o755))
	require.NoError(t, os.WriteFile(userConfig, []byte(codexConfig), 0o644))

	env.Venom("checkpoint", "hook", "install", "codex", "--via=hooks").OK(t)
	once := env.Read(".codex/hooks.json")
	env.Venom("checkpoint", "hook", "install", "codex", "--via=hooks").OK(t)
	assert.Equal(t, once, env.Read(".codex/hooks.json"))
	// Codex reads notify from the user's config.toml only.
	for _, via := range []string{"--via=notify", "--via=both"} {
		r := env.Venom("checkpoint", "hook", "install", "codex", via, "--json").Fails(t, 2, "invalid_params.usage")
		assert.Contains(t, r.Stdout, userConfig, "the error names the file Codex reads")
		assert.Contains(t, env.Venom("checkpoint", "hook", "install", "codex", via).Stderr,
			"hint: install notify there with --scope=user --via=notify")
	}
	assert.NoFileExists(t, env.Path(".codex/config.toml"), "nothing is written where Codex never reads notify")
	assert.Equal(t, once, env.Read(".codex/hooks.json"))
	env.Venom("checkpoint", "hook", "install", "codex", "--via=notify", "--scope=user").OK(t)
	env.Venom("checkpoint", "hook", "install", "codex", "--via=notify", "--scope=user").OK(t)
	cfg, err := os.ReadFile(userConfig)
	require.NoError(t, err)
	assert.Equal(t, `notify = ["git", "venom-checkpoint", "hook", "codex"]`+"\n"+codexConfig, string(cfg))
	env.Venom("checkpoint", "hook", "uninstall", "codex", "--scope=user").OK(t)
	cfg, err = os.ReadFile(userConfig)
	require.NoError(t, err)
	assert.Equal(t, codexConfig, string(cfg))
	var got struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal([]byte(once), &got))
	post := got.Hooks["PostToolUse"]
	require.Len(t, post, 2)
	assert.Equal(t, "^apply_patch$", post[1].Matcher)
	assert.Equal(t, "git venom-checkpoint hook codex", post[1].Hooks[0].Command)
	assert.Len(t, got.Hooks["Interrupt"], 1, "the others stay")

	env.Venom("checkpoint", "hook", "uninstall", "codex").OK(t)
	assert.Equal(t, string(orig), env.Read(".codex/hooks.json"))

	// Codex runs one notify program: another one is not replaced.
	require.NoError(t, os.WriteFile(userConfig, []byte("notify = [\"/usr/bin/my-notifier\"]\n"), 0o644))
	env.Venom("checkpoint", "hook", "install", "codex", "--via=notify", "--scope=user", "--json").Fails(t, 5, "conflict.hook_installed")
	cfg, err = os.ReadFile(userConfig)
	require.NoError(t, err)
	assert.Equal(t, "notify = [\"/usr/bin/my-notifier\"]\n", string(cfg))

	// auto: hooks when codex is not installed.
	env.Venom("checkpoint", "hook", "install", "codex").OK(t)
	assert.Contains(t, env.Read(".codex/hooks.json"), "git venom-checkpoint hook codex")
}
