package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const esc = "\x1b["

// Colour follows git's settings as git's own commands do: --color, then
// color.venom, then color.ui (git -c included), then NO_COLOR and
// CLICOLOR_FORCE, then whether the stream is a terminal.
func TestOutput_ColourFollowsFlagsConfigAndEnvironment(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Extra = []string{"GIT_PAGER=cat"}

	screen, code := env.ptyRun(t, nil, "diff", "k1", "k2")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, esc, "a terminal gets colour by default")

	for _, line := range []string{
		"git -c color.ui=never venom-diff k1 k2",
		"git -c color.venom=false venom-diff k1 k2",
		"git -c color.ui=always venom-diff --color=never k1 k2",
		"NO_COLOR=1 git venom-diff k1 k2",
		"NO_COLOR=1 git venom-checkpoint list",
		"git venom-checkpoint list --color=never",
		"git venom-checkpoint agents --color=never",
	} {
		screen, code := env.ptyRunLine(t, nil, line)
		require.Equal(t, 0, code, "%s: %s", line, screen)
		assert.NotContains(t, screen, esc, line)
		assert.Regexp(t, `a\.txt|k3`, screen, line) // the output itself was shown
	}

	// Piped: plain, unless asked for.
	assert.NotContains(t, env.Venom("diff", "k1", "k2").OK(t).Stdout, esc)
	assert.Contains(t, env.Venom("diff", "k1", "k2", "--color=always").OK(t).Stdout, esc)
	assert.Contains(t, env.VenomIn(env.Dir, []string{"CLICOLOR_FORCE=1"}, "diff", "k1", "k2").OK(t).Stdout, esc)
	assert.NotContains(t, env.VenomIn(env.Dir, []string{"CLICOLOR_FORCE=0"}, "diff", "k1", "k2").OK(t).Stdout, esc)
	assert.Contains(t, env.Venom("checkpoint", "list", "--color=always").OK(t).Stdout, esc)
	env.Git("config", "color.venom", "always")
	assert.Contains(t, env.Venom("checkpoint", "list").OK(t).Stdout, esc, "color.venom=always")
	assert.NotContains(t, env.Venom("checkpoint", "list", "--color=auto").OK(t).Stdout, esc, "the flag wins")
	assert.NotContains(t, env.Venom("checkpoint", "list", "--json").OK(t).Stdout, esc, "JSON is never coloured")
	env.Git("config", "--unset", "color.venom")

	env.Venom("checkpoint", "list", "--color=blue").Fails(t, 2, "invalid_params.usage")
}

// Long output goes through git's pager at a terminal (list, events without
// --follow, diff), never when piped or with --no-pager.
func TestOutput_ListEventsAndDiffArePagedAtATerminal(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Extra = []string{`GIT_PAGER=printf 'LESS=%s\n' "$LESS"; sed s/^/PAGED:/`}
	for _, args := range [][]string{{"checkpoint", "list"}, {"checkpoint", "events"}, {"diff", "k1"}} {
		screen, code := env.ptyRun(t, nil, args[0], args[1:]...)
		require.Equal(t, 0, code, screen)
		assert.Contains(t, screen, "LESS=FRX", args)
		assert.Regexp(t, `PAGED:.*(k2|a\.txt)`, screen, args)

		screen, code = env.ptyRun(t, nil, args[0], append(args[1:], "--no-pager")...)
		require.Equal(t, 0, code, screen)
		assert.NotContains(t, screen, "PAGED:", args)

		out := env.Venom(args[0], args[1:]...).OK(t).Stdout
		assert.NotContains(t, out, "PAGED:", args)
	}

	// core.pager when GIT_PAGER is unset; PAGER after it; cat is none.
	env.Extra = []string{"PAGER=sed s/^/PAGER:/"}
	env.Git("config", "core.pager", "sed s/^/CORE:/")
	screen, code := env.ptyRun(t, nil, "checkpoint", "list")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "CORE:")
	env.Git("config", "--unset", "core.pager")
	screen, _ = env.ptyRun(t, nil, "checkpoint", "list")
	assert.Contains(t, screen, "PAGER:")
	env.Extra = []string{"PAGER=cat"}
	screen, _ = env.ptyRun(t, nil, "checkpoint", "list")
	assert.True(t, strings.Contains(screen, "k3"), screen)
}
