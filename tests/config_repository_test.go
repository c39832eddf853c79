package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// venom.* in the repository's own config is ignored (a
// clone must not weaken it), and now said so: one line on stderr, and a
// doctor warning whose fix, run as printed, moves the keys to the global
// config.
func TestConfig_RepositoryKeysAreNamedNotSilent(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	r := env.Venom("checkpoint", "list").OK(t)
	assert.NotContains(t, r.Stderr, "note:", "nothing to say without such a key")

	env.Git("config", "venom.keep", "3")
	env.Git("config", "--add", "venom.exclude", "node_modules/")
	env.Git("config", "--add", "venom.exclude", "build dir/")
	r = env.Venom("checkpoint", "list").OK(t)
	assert.Equal(t, "note: venom.keep, venom.exclude in the repository's config is ignored (only --global and "+
		"--system count; see git venom-checkpoint doctor)\n", r.Stderr)
	assert.Empty(t, env.Venom("checkpoint", "list", "--json").OK(t).Stderr, "--json: no note")
	assert.Empty(t, env.Venom("checkpoint", "list", "-q").OK(t).Stderr, "-q: no note")

	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["config.repository"])
	msg, fix := rep.check(t, "config.repository")
	assert.Contains(t, msg, "venom.keep, venom.exclude in the repository's git config is ignored")
	sh := exec.Command("sh", "-c", fix)
	sh.Dir, sh.Env = env.Dir, env.Environ()
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "the fix as printed: %s\n%s", fix, out)
	assert.Equal(t, "3", strings.TrimSpace(env.Git("config", "--global", "venom.keep")))
	assert.Equal(t, "node_modules/\nbuild dir/", strings.TrimSpace(env.Git("config", "--global", "--get-all", "venom.exclude")))
	assert.Empty(t, env.Venom("checkpoint", "list").OK(t).Stderr, "the keys moved: no note")
	env.Venom("checkpoint", "doctor", "--json").JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["config.repository"])
}
