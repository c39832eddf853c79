package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/harness"
)

// TestHarnessLists_NameEveryRegisteredHarness: help reads the harness
// list from the registry; every list written by hand (errors, hints, the
// overview, README, man pages, docs) is checked against it, so that a new
// harness fails here until each place names it.
func TestHarnessLists_NameEveryRegisteredHarness(t *testing.T) {
	t.Parallel()
	names := harness.Names()
	require.GreaterOrEqual(t, len(names), 5)
	namesIn := func(t *testing.T, where, text string) {
		t.Helper()
		for _, n := range names {
			assert.Contains(t, text, n, "%s does not name the harness %s:\n%s", where, n, text)
		}
	}
	namesIn(t, "invalid_params.harness's description", errcode.Registry[errcode.InvalidParamsHarness])

	// Written lists: each place that starts one must finish it.
	for _, c := range []struct{ file, start string }{
		{"README.md", "hook install claude-code` (or"},
		{"bin/git-venom", "hook install\nclaude-code' (or"},
		{"docs/checkpoints.md", "its harness (`claude-code`"},
		{"man/git-venom-checkpoint.1", `{\fBclaude\-code\fR`},
		{"man/git-venom-checkpoint.1", `.BR hook " {" claude\-code`},
		{"man/git-venom-checkpoint.1", `.BR "hook install" " {" claude\-code`},
	} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), c.file))
		require.NoError(t, err)
		text := string(b)
		require.Contains(t, text, c.start, c.file)
		for rest := text; strings.Contains(rest, c.start); {
			rest = rest[strings.Index(rest, c.start):]
			list := rest[:min(len(rest), 160)]
			namesIn(t, c.file, strings.ReplaceAll(list, `\-`, "-"))
			rest = rest[len(c.start):]
		}
	}

	// The protocol's overview names them by title.
	b, err := os.ReadFile(filepath.Join(repoRoot(), "docs/harness.md"))
	require.NoError(t, err)
	intro := string(b)[:min(len(b), 400)]
	for _, k := range harness.Kinds {
		assert.Contains(t, intro, k.Title, "docs/harness.md's first lines do not name %s", k.Title)
	}

	// What the commands print.
	env := NewEnv(t)
	namesIn(t, "the first checkpoint's hint", env.Venom("checkpoint").Stderr)
	help := env.Venom("checkpoint", "hook", "install", "-h").OK(t).Stdout
	namesIn(t, "hook install -h", strings.Join(strings.Fields(help), " "))
	r := env.Venom("checkpoint", "hook", "install", "no-such-harness")
	r.Fails(t, 2, "invalid_params")
	namesIn(t, "hook install of an unknown harness", r.Stderr)
}
