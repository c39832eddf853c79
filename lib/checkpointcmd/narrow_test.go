package checkpointcmd

import (
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/harness"
)

// kongParse reads args with grammar as kong does for cli.Run: with the
// grammar's own variables (cli.Varser), if it has any.
func kongParse(t *testing.T, grammar any, args []string) (*kong.Context, error) {
	t.Helper()
	vars := kong.Vars{"version": "test"}
	if g, ok := grammar.(cli.Varser); ok {
		for k, v := range g.Vars() {
			vars[k] = v
		}
	}
	p, err := kong.New(grammar, vars, kong.Exit(func(int) { t.Fatalf("kong exited on %q", args) }))
	require.NoError(t, err)
	return p.Parse(args)
}

// globalsOf is grammar's global flags after a parse.
func globalsOf(grammar any) cli.Globals {
	return *grammar.(interface{ GlobalFlags() *cli.Globals }).GlobalFlags()
}

// parseWith reads args with grammar as kong does for cli.Run: the verb
// chosen, its flags and the global ones.
func parseWith(t *testing.T, grammar any, args []string) (verb string, run *HookRunCmd, globals cli.Globals, err error) {
	t.Helper()
	kctx, err := kongParse(t, grammar, args)
	if err != nil {
		return "", nil, cli.Globals{}, err
	}
	cmd, ok := kctx.Selected().Target.Addr().Interface().(*HookRunCmd)
	require.True(t, ok, "%q chose %s", args, kctx.Selected().Path())
	return kctx.Selected().Path(), cmd, globalsOf(grammar), nil
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
	for _, args := range [][]string{{"hook"}, {"hook", "install", "claude-code"}, {"explain"}, {"hook", "nosuch"}} {
		assert.Nil(t, New().Narrow(args), "%q is not a hook call", args)
	}
	// The narrow grammar's hook verb is tagged as the whole one's.
	whole, _ := reflect.TypeOf(CLI{}).FieldByName("Hook")
	part, _ := reflect.TypeOf(hookCLI{}).FieldByName("Hook")
	assert.Equal(t, whole.Tag, part.Tag)
}

// parseTake is parseVerb of take: the verb chosen, take's flags and
// the global ones.
func parseTake(t *testing.T, grammar any, args []string) (verb string, take TakeCmd, globals cli.Globals, err error) {
	t.Helper()
	verb, value, globals, err := parseVerb(t, grammar, "Take", args)
	if err != nil {
		return "", take, globals, err
	}
	require.Equal(t, "take", verb, "%q", args)
	return verb, value.(TakeCmd), globals, nil
}

// requireCLIFields checks that part, a narrow grammar, is CLI's Globals
// and one verb's field, of CLI's types and tagged as they are.
func requireCLIFields(t *testing.T, part reflect.Type) {
	t.Helper()
	require.Equal(t, 2, part.NumField(), part.Name())
	for i := range part.NumField() {
		f := part.Field(i)
		whole, ok := reflect.TypeOf(CLI{}).FieldByName(f.Name)
		require.True(t, ok, f.Name)
		assert.Equal(t, whole.Type, f.Type, f.Name)
		assert.Equal(t, whole.Tag, f.Tag, f.Name)
	}
}

// kongValued are the flags, aliases too, that kong's model of a narrow
// grammar says take a value.
func kongValued(t *testing.T, grammar any) []string {
	t.Helper()
	p, err := kong.New(grammar, kong.Vars{"version": "test"})
	require.NoError(t, err)
	var valued []string
	for _, group := range p.Model.Node.Children[0].AllFlags(false) {
		for _, f := range group {
			if !f.IsBool() {
				for _, n := range append([]string{f.Name}, f.Aliases...) {
					valued = append(valued, "--"+n)
				}
			}
		}
	}
	return valued
}

// A take, the default verb, named or not, is read by the narrow grammar
// to the very values the whole one reads, or refused by both (cli.Run
// then reads it with the whole grammar, for its message); a list that
// might name another verb, ask for help, or that runWhole would rewrite
// (a value starting with "-", glued to its flag; "--") is not narrowed.
func TestNarrow_TakeSameGrammar(t *testing.T) {
	t.Setenv("VENOM_AGENT", "")
	for _, c := range []struct {
		args   []string
		narrow bool
	}{
		{nil, true},
		{[]string{"--agent=a1"}, true},
		{[]string{"--agent", "a1", "--reason=turn_start", "--turn=t3"}, true},
		{[]string{"--agent=a1", "--reason", "turn_end", "--turn", "t3", "--label", "L", "--json", "-q", "--no-pager", "--color", "never"}, true},
		{[]string{"take", "--agent=a1", "--isolation=worktree", "--parent", "p0", "--quiet"}, true},
		{[]string{"take"}, true},
		{[]string{"--label", "list"}, true}, // a value, not the verb
		{[]string{"--label", "take", "--agent", "hook"}, true},
		{[]string{"--label=", "--isolation", ""}, true},
		{[]string{"--label=--json", "--turn=-1"}, true},
		{[]string{"--agent=a1", "--color"}, true},
		{[]string{"--color", "always", "--agent=a1"}, true},
		{[]string{"--agent=a1", "--agent=a2"}, true},
		{[]string{"--json=true", "--no-pager=false"}, true},
		{[]string{"--reason=bogus"}, true}, // both refuse it
		{[]string{"--reason", "Manual"}, true},
		{[]string{"--isolation=bogus"}, true},
		{[]string{"--bogus"}, true},
		{[]string{"--limit=5"}, true},
		{[]string{"--agent"}, true},
		{[]string{"--label", "--json"}, false}, // glued: labels "--json"
		{[]string{"--agent", "-q"}, false},
		{[]string{"--color", "--agent=a1"}, false},
		{[]string{"--color", "list"}, false},
		{[]string{"list"}, false},
		{[]string{"--agent=a1", "list"}, false},
		{[]string{"lsit"}, false},
		{[]string{"--json", "take"}, false},
		{[]string{"take", "take"}, false},
		{[]string{"take", "--agent=a1", "--", "x"}, false},
		{[]string{"--agent=a1", "--"}, false},
		{[]string{"-h"}, false},
		{[]string{"-qh"}, false},
		{[]string{"--help"}, false},
		{[]string{"help"}, false},
		{[]string{"__complete", "--"}, false},
		{[]string{"--limit", "5"}, false},
		{[]string{"hook"}, false},
	} {
		narrow := New().Narrow(c.args)
		if _, take := narrow.(*takeCLI); !c.narrow {
			assert.False(t, take, "%q", c.args)
			continue
		}
		require.IsType(t, &takeCLI{}, narrow, "%q", c.args)
		wVerb, wTake, wGlobals, wErr := parseTake(t, New(), c.args)
		verb, take, globals, err := parseTake(t, narrow, c.args)
		if wErr != nil {
			assert.Error(t, err, "%q: the whole grammar refuses it (%v)", c.args, wErr)
			continue
		}
		require.NoError(t, err, "%q", c.args)
		assert.Equal(t, wVerb, verb, "%q", c.args)
		assert.Equal(t, wTake, take, "%q", c.args)
		assert.Equal(t, wGlobals, globals, "%q", c.args)
	}
	// VENOM_AGENT is read by both, and --agent wins over it in both.
	t.Setenv("VENOM_AGENT", "from-env")
	for _, args := range [][]string{nil, {"--agent=a1"}, {"take"}} {
		_, wTake, _, wErr := parseTake(t, New(), args)
		_, take, _, err := parseTake(t, New().Narrow(args), args)
		require.NoError(t, wErr)
		require.NoError(t, err)
		assert.Equal(t, wTake, take, "%q", args)
	}
	// The narrow grammar is CLI's fields Globals and Take, tagged as they
	// are, and takeWords knows which flags take a value, as kong says.
	requireCLIFields(t, reflect.TypeOf(takeCLI{}))
	assert.ElementsMatch(t, takeValued, kongValued(t, &takeCLI{}))
	_, hints := any(&takeCLI{}).(cli.Hinter)
	assert.True(t, hints, "a take's errors have CLI's hints")
}

// wholeOnly is CLI without its narrow parts: kong reads every list with
// the whole grammar, as before they were.
type wholeOnly struct{ CLI }

func (w *wholeOnly) Narrow([]string) any { return nil }

func (w *wholeOnly) Read([]string) (func(*cli.Env) error, *cli.Globals, bool) { return nil, nil, false }

// A take read by CLI.Read, or a verb by its narrow part, run in a
// repository, says and does what the whole grammar's does, its errors'
// hints (the harnesses' names) included.
func TestNarrow_TakeRunsAsTheWholeGrammar(t *testing.T) {
	for _, args := range [][]string{
		nil, // no agent registered: an error, with a hint naming the harnesses
		{"--agent=a1", "--label", "list"},
		{"take", "--agent", "a1", "--reason=turn_start", "--turn=t1", "-q"},
		{"--agent=a1", "--reason=Manual"},
		{"--agent=Not Valid", "--json"},
		{"list", "--agent", "a1"}, // no such agent: an error with hints
		{"prune", "--dry-run"},
		{"clean", "--agent=a1", "--dry-run"},
		{"agents", "--json"},
		{"doctor", "-q"},
	} {
		var results []clitest.Result
		for _, g := range []any{New(), &wholeOnly{*New()}} {
			w := newWorld(t)
			w.Write("b.txt", "b\n")
			r := w.Run("git-venom-checkpoint", g, args...)
			results = append(results, r)
			results = append(results, clitest.Result{Out: w.Git("for-each-ref", "--format=%(refname) %(tree)", "refs/venom/checkpoints")})
		}
		assert.Equal(t, results[2:], results[:2], "%q", args)
	}
}

// parseVerb reads args with grammar as kong does for cli.Run: the verb
// chosen, the value of grammar's field of that name, the global flags.
func parseVerb(t *testing.T, grammar any, field string, args []string) (verb string, value any, globals cli.Globals, err error) {
	t.Helper()
	kctx, err := kongParse(t, grammar, args)
	if err != nil {
		return "", nil, globals, err
	}
	value = reflect.ValueOf(grammar).Elem().FieldByName(field).Interface()
	return kctx.Selected().Path(), value, globalsOf(grammar), nil
}

// A verb named first, with only flags, is read by that verb's part of
// the grammar to the values the whole one reads, or refused by both; a
// list with anything else is not narrowed.
func TestNarrow_VerbsSameGrammar(t *testing.T) {
	t.Setenv("VENOM_AGENT", "")
	tails := [][]string{
		nil,
		{"--json", "-q", "--no-pager", "--color", "always"},
		{"--color"},
		{"--agent=a1", "--agent", "a2", "--dry-run"},
		{"--limit", "5", "--turn", "t1", "--before", "list", "--tools"},
		{"--max-count=3"},
		{"--keep", "2"},
		{"--types", "agent.*", "--resources", "agent:a1", "--since", "3", "--follow"},
		{"--since=x"}, {"--keep=-1"}, {"--limit=x"},
		{"--bogus"}, {"--agent"},
	}
	accepted := 0
	for name, v := range narrowVerbs {
		field := strings.ToUpper(name[:1]) + name[1:]
		for _, tail := range tails {
			args := append([]string{name}, tail...)
			narrow := New().Narrow(args)
			if narrow == nil {
				assert.False(t, flagWords(tail, v.valued), "%q", args)
				continue
			}
			accepted++
			wVerb, wValue, wGlobals, wErr := parseVerb(t, New(), field, args)
			verb, value, globals, err := parseVerb(t, narrow, field, args)
			if wErr != nil {
				assert.Error(t, err, "%q: the whole grammar refuses it (%v)", args, wErr)
				continue
			}
			require.NoError(t, err, "%q", args)
			assert.Equal(t, wVerb, verb, "%q", args)
			assert.Equal(t, wValue, value, "%q", args)
			assert.Equal(t, wGlobals, globals, "%q", args)
		}
		// Its fields are CLI's Globals and the verb's, tagged as they are,
		// and valued is what kong's model says takes a value.
		part := reflect.TypeOf(v.grammar()).Elem()
		requireCLIFields(t, part)
		assert.Equal(t, field, part.Field(1).Name)
		assert.ElementsMatch(t, v.valued, kongValued(t, v.grammar()), name)
		_, hints := v.grammar().(cli.Hinter)
		assert.True(t, hints, "%s's errors have CLI's hints", name)
	}
	assert.Greater(t, accepted, 40)
	for _, args := range [][]string{
		{"list", "--agent", "--json"}, {"list", "-n", "5"}, {"list", "--", "x"}, {"list", "x"},
		{"list", "--help"}, {"list", "-h"}, {"prune", "--keep", "-1"}, {"doctor", "list"}, {"list", "list"},
		{"doctor", "--agent", "a1"}, {"hook"}, {"help", "list"}, {"explain"}, {"--json", "list"},
	} {
		assert.Nil(t, New().Narrow(args), "%q", args)
	}
	for _, args := range [][]string{{"list", "--agent", "a1", "--json"}, {"doctor"}, {"prune", "--dry-run", "-q"}} {
		assert.NotNil(t, New().Narrow(args), "%q", args)
	}
}
