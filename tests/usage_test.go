package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The command line reads as git's, with none of the
// parser's own words (kong's STRING, "EOL", git-venom-checkpoint).

// Help names the command as it is typed, and each value as a git manual
// does; rollback takes one checkpoint and diff two.
func TestUsage_HelpReadsAsGit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bin   string
		verb  []string
		usage string
	}{
		{"git-venom-checkpoint", nil, "Usage: git venom-checkpoint <command> [flags]"},
		{"git-venom-checkpoint", []string{"list"}, "Usage: git venom-checkpoint list [flags]"},
		{"git-venom-rollback", nil, "Usage: git venom-rollback [<checkpoint>] [flags]"},
		{"git-venom-diff", nil, "Usage: git venom-diff [<from> [<to>]] [flags]"},
	} {
		out := help(t, tc.bin, tc.verb)
		assert.True(t, strings.HasPrefix(out, tc.usage+"\n"), "%s %v -h:\n%s", tc.bin, tc.verb, out)
		for _, leak := range []string{"Usage: git-venom-", "Run \"git-venom-", "=STRING", "=INT", `=""`, `="`, "=WHEN", " ...]"} {
			assert.NotContains(t, out, leak, "%s %v -h", tc.bin, tc.verb)
		}
	}
	out := help(t, "git-venom-checkpoint", []string{"take"})
	assert.Contains(t, out, "--agent=<agent>")
	assert.Contains(t, out, "--reason=<reason>")
	assert.Contains(t, out, "--isolation=<isolation>")
	assert.Contains(t, out, "--color=<when>")
}

func TestUsage_ParsesAsGit(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.Write("b.txt", "b\n")
	env.Take(t, "--agent=a1")
	env.Write("c.txt", "c\n")
	env.Take(t, "--agent=a1")

	// A bare --color is always, as git's; the next word may still be its value.
	r := env.Venom("checkpoint", "list", "--color").OK(t)
	assert.Contains(t, r.Stdout, "\x1b[", "--color alone colours a pipe")
	r = env.Venom("checkpoint", "list", "--color", "never").OK(t)
	assert.NotContains(t, r.Stdout, "\x1b[")

	// git log's -n and --max-count.
	for _, args := range [][]string{{"-n", "1"}, {"-n1"}, {"--max-count=1"}, {"--limit=1"}} {
		r := env.Venom("checkpoint", append([]string{"list", "--json"}, args...)...).OK(t).Map(t)
		require.Len(t, r["checkpoints"], 1, "%v", args)
	}

	// git venom --version, as git's own commands answer it.
	env.Extra = append(env.Extra, scriptPATH())
	r = env.GitRaw("venom", "--version")
	r.OK(t)
	assert.Regexp(t, `^git-venom \S+\n$`, r.Stdout)
}

// A mistyped value gets a "did you mean", a flag's own code where the
// registry has one, and a hint naming the verb whose flags -h lists: never
// a bare "see --help".
func TestUsage_ErrorsSaySomething(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	for _, tc := range []struct {
		args       []string
		code, hint string
	}{
		{[]string{"checkpoint", "--agent=a1", "--reason=turnstart"}, "invalid_params.reason", "hint: did you mean --reason=turn_start?"},
		{[]string{"checkpoint", "--agent=a1", "--isolation=worktre"}, "invalid_params.isolation", "hint: did you mean --isolation=worktree?"},
		{[]string{"rollback", "k1", "--restore=fils"}, "invalid_params.usage", "hint: did you mean --restore=files?"},
		{[]string{"checkpoint", "list", "--agent=a2"}, "not_found.agent", "hint: did you mean --agent=a1?"},
		{[]string{"diff", "--agent=a11", "k1"}, "not_found.agent", "hint: did you mean --agent=a1?"},
		{[]string{"checkpoint", "list", "--bogus"}, "invalid_params.usage", "hint: git venom-checkpoint list -h lists its flags"},
		{[]string{"checkpoint", "hook", "install", "--bogus", "codex"}, "invalid_params.usage", "hint: git venom-checkpoint hook install -h lists its flags"},
		{[]string{"diff", "--stat=3"}, "invalid_params.usage", "hint: git venom-diff -h lists its flags"},
	} {
		r := env.Venom(tc.args[0], tc.args[1:]...)
		assert.Equal(t, 2+boolInt(strings.HasPrefix(tc.code, "not_found")), r.Code, "%v: %s", tc.args, r.Stderr)
		assert.Contains(t, r.Stderr, "error: "+tc.code+": ", "%v", tc.args)
		assert.Contains(t, r.Stderr, tc.hint+"\n", "%v", tc.args)
		assert.NotContains(t, r.Stderr, "see --help", "%v", tc.args)
		assert.NotContains(t, r.Stderr, "EOL", "%v", tc.args)
	}
	j := env.Venom("checkpoint", "--agent=a1", "--reason=turnstart", "--json").Fails(t, 2, "invalid_params.reason").Map(t)
	assert.Equal(t, map[string]any{"reason": "turnstart"}, j["error"].(map[string]any)["data"])
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
