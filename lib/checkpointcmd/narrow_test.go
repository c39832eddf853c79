package checkpointcmd

import (
	"reflect"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/harness"
)

// parseWith reads args with grammar as kong does for cli.Run: the verb
// chosen, its flags and the global ones.
func parseWith(t *testing.T, grammar any, args []string) (verb string, run *HookRunCmd, globals cli.Globals, err error) {
	t.Helper()
	vars := kong.Vars{"version": "test"}
	for k, v := range helpVars() {
		vars[k] = v
	}
	p, err := kong.New(grammar, vars, kong.Exit(func(int) { t.Fatalf("kong exited on %q", args) }))
	require.NoError(t, err)
	kctx, err := p.Parse(args)
	if err != nil {
		return "", nil, cli.Globals{}, err
	}
	cmd, ok := kctx.Selected().Target.Addr().Interface().(*HookRunCmd)
	require.True(t, ok, "%q chose %s", args, kctx.Selected().Path())
	return kctx.Selected().Path(), cmd, *grammar.(interface{ GlobalFlags() *cli.Globals }).GlobalFlags(), nil
}

// The hook call's narrow grammar is the whole grammar's hook verb: each
// harness, every flag, read to the same values, the same words refused
// (cli.Run then reads them with the whole grammar, for its message).
func TestNarrow_SameGrammar(t *testing.T) {
	for _, k := range harness.Kinds {
		for _, tail := range [][]string{
			nil,
			{"--per-tool"},
			{"--agent=a1", "--isolation=worktree", "--parent", "p0", "--per-tool=true"},
			{"--agent", "a2", "--isolation=", "--json", "-q", "--color", "never", "--no-pager"},
			{"--color"},
			{`{"type":"agent-turn-complete"}`},
			{"--isolation=bogus"},
			{"--bogus"},
			{"one", "two"},
		} {
			args := append([]string{"hook", k.Name}, tail...)
			wVerb, wRun, wGlobals, wErr := parseWith(t, New(), args)
			narrow := New().Narrow(args)
			require.NotNil(t, narrow, "%q", args)
			verb, run, globals, err := parseWith(t, narrow, args)
			if wErr != nil {
				assert.Error(t, err, "%q: the whole grammar refuses it (%v)", args, wErr)
				continue
			}
			require.NoError(t, err, "%q", args)
			assert.Equal(t, wVerb, verb, "%q", args)
			assert.Equal(t, *wRun, *run, "%q", args)
			assert.Equal(t, wGlobals, globals, "%q", args)
		}
	}
	for _, args := range [][]string{{"hook"}, {"hook", "install", "claude-code"}, {"list"}, {"hook", "nosuch"}, {}} {
		assert.Nil(t, New().Narrow(args), "%q is not a hook call", args)
	}
	// The narrow grammar's hook verb is tagged as the whole one's.
	whole, _ := reflect.TypeOf(CLI{}).FieldByName("Hook")
	part, _ := reflect.TypeOf(hookCLI{}).FieldByName("Hook")
	assert.Equal(t, whole.Tag, part.Tag)
}
