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

// The settings files `hook install` writes are git-venom's own, not a
// person's outside edit: a rollback to a checkpoint taken before the
// install leaves them as they are, and says so in one line.
func TestRollback_LeavesTheHooksInstallWrote(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "base\n")
	env.Commit("a")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Write("a.txt", "the agent's\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	files := map[string]string{
		".claude/settings.local.json": "claude-code",
		".gemini/settings.json":       "gemini-cli",
		".qwen/settings.json":         "qwen-code",
	}
	for _, h := range []string{"claude-code", "gemini-cli", "qwen-code"} {
		env.Venom("checkpoint", "hook", "install", h).OK(t)
	}
	env.Write("a.txt", "after the install\n")
	before := map[string]string{}
	for f := range files {
		before[f] = fileHash(env.Path(f))
	}
	require.Equal(t, "M a.txt\n?? .claude/settings.local.json\n?? .gemini/settings.json\n?? .qwen/settings.json",
		env.Git("status", "--porcelain=v1", "--untracked-files=all"))

	// a.txt's edit after the install is the person's: overwritten, as
	// asked; the hooks are not, whatever --outside says.
	dry := env.DryRun("k1", "--outside=overwrite")
	left := dry.LeftReasons()
	for f, h := range files {
		assert.Equal(t, "hook_settings", left[f], f)
		for _, l := range dry.Repos[0].Left {
			if l.Path == f {
				require.NotNil(t, l.Detail)
				assert.Equal(t, "git-venom's "+h+" hooks", *l.Detail)
			}
		}
	}
	screen := env.Venom("rollback", "k1", "--dry-run", "--outside=overwrite").OK(t).Stdout
	assert.Contains(t, screen, "Left as they are:\n")
	assert.Contains(t, screen, "  .claude/settings.local.json\n    (git-venom's claude-code hooks, kept: hook install wrote them)\n")

	env.Rollback("k1", "--outside=overwrite")
	assert.Equal(t, "base\n", env.Read("a.txt"), "the agent's file is restored")
	for f := range files {
		assert.Equal(t, before[f], fileHash(env.Path(f)), "%s changed", f)
	}
	assert.Equal(t, "?? .claude/settings.local.json\n?? .gemini/settings.json\n?? .qwen/settings.json",
		env.Git("status", "--porcelain=v1", "--untracked-files=all"))
	hooks := env.ReadHookSettings(".claude/settings.local.json")
	assert.NotEmpty(t, hooks.Hooks["Stop"])

	// A target that holds the hooks too is restored as any file: what
	// else the person changed there goes back with it.
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	with := env.Read(".claude/settings.local.json")
	env.Write(".claude/settings.local.json", strings.Replace(with, "{", `{"permissions": {"allow": ["Bash(ls:*)"]},`, 1))
	dry = env.DryRun("last", "--outside=overwrite")
	assert.Empty(t, dry.LeftReasons()[".claude/settings.local.json"])
	assert.Equal(t, "outside", dry.Classes()[".claude/settings.local.json"])
	env.Rollback("last", "--outside=overwrite")
	assert.Equal(t, with, env.Read(".claude/settings.local.json"))
}

// doctor checks the hooks of Claude Code and Gemini CLI as it does the
// others': installed where expected, the file parses as the harness reads
// it, every event there, and the hook's program on PATH.
func TestDoctor_ClaudeAndGeminiHooks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	doctor := func(extra ...string) map[string][2]string {
		t.Helper()
		var rep doctorReport
		r := env.run(env.Dir, extra, filepath.Join(binDir, "git-venom-checkpoint"), "doctor", "--json")
		require.Contains(t, []int{0, 1}, r.Code, r.Stderr)
		r.JSON(t, &rep)
		out := map[string][2]string{}
		for _, c := range rep.Checks {
			fix := ""
			if c.Fix != nil {
				fix = *c.Fix
			}
			out[c.ID] = [2]string{c.Status + ": " + c.Message, fix}
		}
		return out
	}
	d := doctor()
	assert.Equal(t, "ok: no Claude Code hooks", d["harness.claude-code.hooks"][0])
	assert.Equal(t, "ok: no Gemini CLI hooks", d["harness.gemini-cli.hooks"][0])

	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	env.Venom("checkpoint", "hook", "install", "gemini-cli").OK(t)
	d = doctor()
	assert.Equal(t, "ok: git-venom's Claude Code hooks are in "+env.Path(".claude/settings.local.json"), d["harness.claude-code.hooks"][0])
	assert.Equal(t, "ok: git-venom's Gemini CLI hooks are in "+env.Path(".gemini/settings.json"), d["harness.gemini-cli.hooks"][0])

	// git-venom-checkpoint not on the PATH the harness runs hooks with.
	d = doctor("PATH=" + gitDir)
	assert.Contains(t, d["harness.claude-code.hooks"][0], "warn: Claude Code runs git-venom's hooks")
	assert.Contains(t, d["harness.claude-code.hooks"][0], "with git-venom-checkpoint, which is not on PATH")

	// A file that does not parse: the line and column.
	gem := env.Read(".gemini/settings.json")
	env.Write(".gemini/settings.json", "{\n  \"hooks\": {,\n}\n")
	d = doctor()
	assert.Contains(t, d["harness.gemini-cli.hooks"][0], "warn: "+env.Path(".gemini/settings.json")+" does not parse (line 2, column 13:")
	assert.Equal(t, "mend "+env.Path(".gemini/settings.json")+" at that line, then git venom-checkpoint hook install gemini-cli",
		d["harness.gemini-cli.hooks"][1])
	// Comments are Gemini CLI's JSON; they parse.
	env.Write(".gemini/settings.json", "// mine\n"+gem)
	assert.Contains(t, doctor()["harness.gemini-cli.hooks"][0], "ok: ")

	// An event's hook taken out by hand.
	claude := env.Read(".claude/settings.local.json")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(claude), &m))
	delete(m["hooks"].(map[string]any), "Stop")
	b, err := jsonMarshal(m)
	require.NoError(t, err)
	env.Write(".claude/settings.local.json", string(b))
	d = doctor()
	assert.Equal(t, "warn: git-venom's Claude Code hooks in "+env.Path(".claude/settings.local.json")+
		" lack Stop: those events are not recorded", d["harness.claude-code.hooks"][0])
	assert.Equal(t, "git venom-checkpoint hook install claude-code", d["harness.claude-code.hooks"][1])

	// No hooks at all while the repository has Claude Code agents.
	require.NoError(t, os.Remove(env.Path(".claude/settings.local.json")))
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	d = doctor()
	assert.Contains(t, d["harness.claude-code.hooks"][0], "warn: this repository has Claude Code agents but no git-venom hooks in ")
}
