package tests

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutput_RollbackFitsEightyColumns: the outside-edit
// refusal and its hints, the plan's "To run it", the success line with
// its undo and the not-a-repository error fit 80 columns, as git's
// output does, with an agent id of a harness session and nested paths.
// Before: 117 and 126 (refusal), 124 (plan), 128 (success), 167 (no
// repository).
func TestOutput_RollbackFitsEightyColumns(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("src/components/widget.txt", "a\n")
	env.Commit("base")
	const agent = "--agent=claude-5f2a9c1e"
	env.Turn("claude-5f2a9c1e", func() {
		env.Write("src/components/widget.txt", "b\n")
		env.Write("src/components/new-file.txt", "n\n")
	})
	env.Write("src/components/person-edit.txt", "mine\n")
	fits := func(what, out string) { t.Helper(); fitsEighty(t, what, out) }
	refused := env.Venom("rollback", agent, "k1", "--dry-run")
	refused.Fails(t, 5, "conflict.outside_edits")
	fits("refusal", refused.Stderr)
	dry := env.Venom("rollback", agent, "k1", "--outside=keep", "--dry-run").OK(t).Stdout
	fits("plan", dry)
	m := regexp.MustCompile(`(?m)^  (git venom-rollback .*--plan=p1-[0-9a-f]{16})$`).FindStringSubmatch(dry)
	require.NotNil(t, m, dry)
	done := env.VenomIn(env.Dir, nil, "rollback", strings.Fields(m[1])[2:]...).OK(t).Stdout
	fits("success", done)
	u := regexp.MustCompile(`(?m)^  undo: (git venom-rollback .*)$`).FindStringSubmatch(done)
	require.NotNil(t, u, done)
	// The undo works as printed.
	env.Venom("rollback", append(strings.Fields(u[1])[2:], "--dry-run")...).OK(t)

	outside := t.TempDir()
	r := env.VenomIn(outside, nil, "checkpoint", agent)
	r.Fails(t, 10, "unsupported.checkpoint_no_repo")
	fits("no repository", r.Stderr)
	require.Equal(t, 1, strings.Count(r.Stderr, "not a git repository")+strings.Count(r.Stderr, "not in a git repository"),
		"said once: %s", r.Stderr)
}

// fitsEighty fails when a line of out is wider than 80 columns, but for
// what cannot be cut: a command on a line of its own (a hint's too), to
// copy whole, and a path or id alone on its line. A command followed by
// words that say what it does must fit.
func fitsEighty(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		rest := strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(l, " "), "hint:"), " ")
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "undo: "), "fix: ")
		if wholeCommand(rest) || !strings.Contains(rest, " ") {
			continue
		}
		if !assert.LessOrEqual(t, utf8.RuneCountInString(l), 80, "%s: %q\n%s", what, l, out) {
			return // one report an output
		}
	}
}
