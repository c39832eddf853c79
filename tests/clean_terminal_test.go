package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cleanable is a repository whose only agent, a1, has three checkpoints.
func cleanable(t *testing.T) *Env {
	env := NewEnv(t)
	for i, s := range []string{"1\n", "2\n", "3\n"} {
		env.Write("a.txt", s)
		env.Checkpoint("--agent=a1", "--label=c"+string(rune('1'+i)))
	}
	return env
}

func venomRefs(env *Env) string {
	refs := env.listRefs("refs/venom/checkpoints/")
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.name
	}
	return strings.Join(names, "\n")
}

// At a terminal, clean shows what it would remove and asks first, as a
// rollback does: it takes history away, and with no --agent the agent is
// one the person never named. No, an empty answer, Ctrl-C and end of
// input change nothing: every ref stays and nothing is logged.
func TestClean_TerminalAsksFirst(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		answer string
		code   int
	}{{"n", 0}, {"", 0}, {"\x03", 130}, {"\x04", 130}} {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(c.answer, "\x03", "ctrl-c"), "\x04", "ctrl-d"), func(t *testing.T) {
			t.Parallel()
			env := cleanable(t)
			refs := venomRefs(env)
			require.Equal(t, 3, len(strings.Fields(refs)))
			log := env.LogRecords()
			screen, code := env.ptyRun(t, []string{c.answer}, "checkpoint", "clean")
			require.Equal(t, c.code, code, screen)
			screen = ansiEscape.ReplaceAllString(screen, "")
			assert.Contains(t, screen, "Would archive a1.")
			assert.Contains(t, screen, "Archive a1 and remove 3 checkpoints? [y/N] ")
			assert.Contains(t, screen, "Nothing was changed.")
			assert.NotContains(t, screen, "Archived a1.")
			assert.Equal(t, refs, venomRefs(env))
			assert.Equal(t, log, env.LogRecords())
			env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t)
		})
	}
}

// Yes cleans; an answer that is neither yes nor no is asked again.
func TestClean_TerminalYesCleans(t *testing.T) {
	t.Parallel()
	env := cleanable(t)
	screen, code := env.ptyRun(t, []string{"maybe", "y"}, "checkpoint", "clean")
	require.Equal(t, 0, code, screen)
	screen = ansiEscape.ReplaceAllString(screen, "")
	assert.Contains(t, screen, "Answer y to clean or n to stop. [y/N] ")
	assert.Contains(t, screen, "Archived a1.\r\na1: removed 3 checkpoints, kept 0.")
	assert.Empty(t, venomRefs(env))
	require.Len(t, env.Records("agent.archived"), 1)
}

// The lock is not held while the person reads; a checkpoint taken
// meanwhile is not removed unseen: the new counts are shown and asked.
func TestClean_TerminalChangedWhileAsked(t *testing.T) {
	t.Parallel()
	env := cleanable(t)
	screen, code := env.ptyRunThen(t, []string{"y", "n"}, func(i int) {
		if i == 0 {
			env.Write("a.txt", "4\n")
			env.Checkpoint("--agent=a1")
		}
	}, "git venom-checkpoint clean")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "Changed while you answered:")
	assert.Contains(t, screen, "Archive a1 and remove 4 checkpoints? [y/N] ")
	assert.Equal(t, 4, len(strings.Fields(venomRefs(env))))
	assert.Empty(t, env.Records("agent.archived"))
}

// Off a terminal (a script, a hook, --json) clean acts at once, as
// before: the only agent is cleaned with no --agent and no question.
func TestClean_ScriptedActsAtOnce(t *testing.T) {
	t.Parallel()
	env := cleanable(t)
	r := env.Venom("checkpoint", "clean").OK(t)
	assert.Contains(t, r.Stdout, "Archived a1.\na1: removed 3 checkpoints, kept 0.\n")
	assert.NotContains(t, r.Stdout, "[y/N]")
	assert.Empty(t, venomRefs(env))

	env = cleanable(t)
	sc := env.startScreen(t, "git venom-checkpoint clean --json")
	screen, code := sc.Wait()
	require.Equal(t, 0, code, screen)
	assert.NotContains(t, screen, "[y/N]")
	assert.Empty(t, venomRefs(env))
}
