package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runPrinted runs a git venom command line as it was printed: its words,
// "git venom-<verb>" first, with no quoting to undo.
func runPrinted(t *testing.T, env *Env, line string) Result {
	t.Helper()
	words := strings.Fields(strings.TrimSpace(line))
	require.GreaterOrEqual(t, len(words), 2, "%q", line)
	require.Equal(t, "git", words[0], "%q", line)
	verb, ok := strings.CutPrefix(words[1], "venom-")
	require.True(t, ok, "%q", line)
	return env.Venom(verb, words[2:]...)
}

// printedCommands are the "git venom-..." commands an output prints, on
// lines of their own (after "hint:" or indented).
func printedCommands(out string) []string {
	var cmds []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(l, "hint:"))
		if strings.HasPrefix(l, "git venom-") {
			cmds = append(cmds, l)
		}
	}
	return cmds
}

var planIDRE = regexp.MustCompile(`--plan=(p1-[0-9a-f]{16})`)

// A real call that outside edits refuse printed "--outside=keep leaves
// them as they are"; added to that line it was a stale plan, as the plan
// id holds the choice. The hint is now the dry run that makes a plan
// keeping them, and following it, as printed, rolls back.
func TestHints_OutsideEditsOnRealCallFollowed(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("agent.txt", "agent\n") }) // k1, k2
	out := env.Venom("rollback", "--agent=a1", "k1", "--dry-run").OK(t).Stdout
	m := planIDRE.FindStringSubmatch(out)
	require.NotNil(t, m, "%s", out)
	env.Write("README.md", "a person's edit\n")

	r := env.Venom("rollback", "--agent=a1", "k1", "--plan="+m[1])
	require.Equal(t, 5, r.Code, "%s%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stderr, "conflict.outside_edits")
	assert.NotContains(t, r.Stderr, "hint: --outside=keep")
	var keep string
	for _, c := range printedCommands(r.Stderr) {
		if strings.Contains(c, "--outside=keep") {
			keep = c
		}
	}
	require.NotEmpty(t, keep, "%s", r.Stderr)

	dry := runPrinted(t, env, keep)
	require.Equal(t, 0, dry.Code, "%s%s", dry.Stdout, dry.Stderr)
	var run string
	for _, c := range printedCommands(dry.Stdout) {
		if strings.Contains(c, "--plan=") {
			run = c
		}
	}
	require.NotEmpty(t, run, "%s", dry.Stdout)
	done := runPrinted(t, env, run)
	require.Equal(t, 0, done.Code, "%s%s", done.Stdout, done.Stderr)

	// Plain git: the person's edit is kept, the agent's file is gone.
	assert.Equal(t, "a person's edit\n", env.Read("README.md"))
	assert.Equal(t, "M README.md", env.Git("status", "--porcelain", "--untracked-files=all"))
}

// A plan quoted with another --outside on an unchanged tree said only
// that "the tree, HEAD or a choice" differs; it now says the choice.
func TestHints_StalePlanSaysTheChoice(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("agent.txt", "agent\n") })
	out := env.Venom("rollback", "--agent=a1", "k1", "--dry-run").OK(t).Stdout
	m := planIDRE.FindStringSubmatch(out)
	require.NotNil(t, m, "%s", out)

	r := env.Venom("rollback", "--agent=a1", "k1", "--outside=keep", "--plan="+m[1])
	require.Equal(t, 5, r.Code, "%s%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stderr, "conflict.rollback_stale")
	assert.Contains(t, r.Stderr, "hint: plan "+m[1]+" was made without --outside;\nhint: this call is with --outside=keep\n")
	assert.Equal(t, "agent\n", env.Read("agent.txt"), "a stale plan changed the tree")
}

// After clean archived the only agent, keeping its young safety
// checkpoint, every command without --agent said "no agent registered
// yet" and hinted registering a1, which would adopt the old safety
// checkpoint. It now says a1 was cleaned, and its hint, run as printed,
// lists the kept checkpoint without registering a1 again.
func TestHints_CleanedAgentHintListsKept(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("agent.txt", "agent\n") }) // k1, k2
	env.Write("README.md", "a person's edit\n")
	res := env.Rollback("--agent=a1", "--outside=overwrite", "k1") // safety k3
	require.NotEmpty(t, res.Safety)
	env.Venom("checkpoint", "clean", "--agent=a1").OK(t)
	refs := env.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/")
	require.Contains(t, refs, "refs/venom/checkpoints/a1/3", "clean kept no safety checkpoint")

	r := env.Venom("checkpoint", "list")
	require.Equal(t, 2, r.Code, "%s%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stderr, "invalid_params.agent: a1 was cleaned (archived)")
	assert.NotContains(t, r.Stderr, "registers agent a1")
	var list string
	for _, c := range printedCommands(r.Stderr) {
		if strings.Contains(c, " list ") {
			list, _, _ = strings.Cut(c, "   ")
		}
	}
	require.NotEmpty(t, list, "%s", r.Stderr)
	out := runPrinted(t, env, list)
	require.Equal(t, 0, out.Code, "%s%s", out.Stdout, out.Stderr)
	assert.Regexp(t, `(?m)^k3\s+pre_rollback`, out.Stdout)
	assert.Equal(t, refs, env.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/"))

	// The same from the rollback's undo, which also names no agent.
	u := env.Venom("rollback", "--undo", "--dry-run")
	assert.Contains(t, u.Stderr, "a1 was cleaned (archived)")
}
