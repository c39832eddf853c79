package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hook install writes a local-scope settings file, this clone's own, that
// git does not ignore: git status shows it and checkpoints hold it. The
// install says the command that ignores it (as Claude Code ignores its
// settings.local.json), which runs as printed; once it is ignored, or for
// a project-scope file meant to be committed, nothing is said.
func TestHookInstall_SaysHowToIgnoreLocalSettings(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	before := env.Git("status", "--porcelain")
	r := env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	assert.Equal(t, "?? .claude/", env.Git("status", "--porcelain"))
	assert.Contains(t, r.Stderr, "hint: git does not ignore /.claude/settings.local.json;")
	var cmd string
	for _, l := range strings.Split(r.Stderr, "\n") {
		assert.LessOrEqual(t, len([]rune(l)), 80, l)
		if c, ok := strings.CutPrefix(l, "hint:   "); ok {
			cmd = c
		}
	}
	require.Equal(t, `printf '%s\n' /.claude/settings.local.json >> .git/info/exclude`, cmd, r.Stderr)
	sh := exec.Command("sh", "-c", cmd)
	sh.Dir, sh.Env = env.Dir, env.Environ()
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, before, env.Git("status", "--porcelain"), "ignored now")
	assert.Equal(t, ".claude/settings.local.json", env.Git("check-ignore", ".claude/settings.local.json"))

	// Ignored: installing again says nothing of it; uninstall leaves the
	// tree as before.
	r = env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	assert.NotContains(t, r.Stderr, "ignore")
	env.Venom("checkpoint", "hook", "uninstall", "claude-code").OK(t)
	assert.Equal(t, before, env.Git("status", "--porcelain"))
	assert.NoDirExists(t, env.Path(".claude"))

	// A project-scope file is for everyone: no hint.
	r = env.Venom("checkpoint", "hook", "install", "claude-code", "--scope=project").OK(t)
	assert.NotContains(t, r.Stderr, "ignore")
	env.Venom("checkpoint", "hook", "uninstall", "claude-code", "--scope=project").OK(t)
	assert.Equal(t, before, env.Git("status", "--porcelain"))
}
