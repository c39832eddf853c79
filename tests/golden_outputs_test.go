package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Golden files pin what people and programs read: the rollback dry run,
// git venom-diff in each form, the events of a turn and a rollback, and
// the error envelopes. A change of wording or shape fails here; when it is
// meant, VENOM_TEST_UPDATE_GOLDEN=1 (or -update) rewrites the files, and the
// diff is reviewed like code.

// goldenTurn is a repository where agent a1 ran one turn that changed
// README.md, added src/new.txt and removed old.txt, then a person edited
// notes.txt outside the turns.
func goldenTurn(t *testing.T) *Env {
	t.Helper()
	env := NewEnv(t)
	env.Write("old.txt", "old\n")
	env.Write("notes.txt", "notes\n")
	env.Commit("files")
	env.Turn("a1", func() {
		env.Write("README.md", "hello\nfrom the agent\n")
		env.Write("src/new.txt", "new\n")
		env.Remove("old.txt")
	})
	env.Write("notes.txt", "notes\nby a person\n")
	return env
}

func TestGolden_RollbackDryRun(t *testing.T) {
	t.Parallel()
	env := goldenTurn(t)
	env.GoldenText(t, "rollback_dry_run.txt", env.Venom("rollback", "k1", "--dry-run", "--outside=keep").OK(t).Stdout)
	env.Golden(t, "rollback_dry_run", env.Venom("rollback", "k1", "--dry-run", "--outside=keep", "--json").OK(t).Stdout)
	env.GoldenText(t, "rollback_dry_run_paths.txt", env.Venom("rollback", "k1", "--dry-run", "--", "src").OK(t).Stdout)
}

func TestGolden_Diff(t *testing.T) {
	t.Parallel()
	env := goldenTurn(t)
	env.GoldenText(t, "diff.txt", env.Venom("diff", "k1", "k2").OK(t).Stdout)
	env.GoldenText(t, "diff_stat.txt", env.Venom("diff", "k1", "k2", "--stat").OK(t).Stdout)
	env.GoldenText(t, "diff_name_only.txt", env.Venom("diff", "k1", "--name-only").OK(t).Stdout)
	env.Golden(t, "diff", env.Venom("diff", "k1", "k2", "--json").OK(t).Stdout)
	env.Golden(t, "diff_paths", env.Venom("diff", "k1", "k2", "--json", "--", "src").OK(t).Stdout)
	env.GoldenText(t, "diff_no_changes.txt", env.Venom("diff", "k1", "k2", "--", "notes.txt").OK(t).Stdout)
}

// The events of a turn (its start and end checkpoints) and of a rollback,
// one JSON object a line, as a program following them reads them.
func TestGolden_Events(t *testing.T) {
	t.Parallel()
	env := goldenTurn(t)
	env.Rollback("--agent=a1", "--checkpoint=k1", "--outside=keep")
	env.GoldenText(t, "events.jsonl", env.Venom("checkpoint", "events", "--json").OK(t).Stdout)
	env.GoldenText(t, "events.txt", env.Venom("checkpoint", "events").OK(t).Stdout)
}

// --json errors: the envelope {error: {code, message, data, hints}} on
// stdout, of a usage error, a missing agent and checkpoint, a refused plan
// and outside edits.
func TestGolden_ErrorEnvelopes(t *testing.T) {
	t.Parallel()
	env := goldenTurn(t)
	for _, c := range []struct {
		name string
		exit int
		r    Result
	}{
		{"error_invalid_params_agent", 2, env.Venom("checkpoint", "--agent=Not Valid", "--json")},
		{"error_not_found_agent", 3, env.Venom("diff", "k1", "--agent=nobody", "--json")},
		{"error_not_found_checkpoint", 3, env.Venom("rollback", "k9", "--dry-run", "--json")},
		{"error_invalid_params_plan", 2, env.Venom("rollback", "k1", "--json")},
		{"error_conflict_outside_edits", 5, env.Venom("rollback", "k1", "--dry-run", "--outside=refuse", "--json")},
		{"error_conflict_rollback_stale", 5, env.Venom("rollback", "k1", "--plan=p1-0000000000000000", "--outside=keep", "--json")},
	} {
		require.Equal(t, c.exit, c.r.Code, "%s: %s%s", c.name, c.r.Stdout, c.r.Stderr)
		require.Empty(t, c.r.Stderr, c.name)
		env.Golden(t, c.name, c.r.Stdout)
	}
	// The human line, on stderr.
	r := env.Venom("rollback", "k9", "--dry-run")
	env.GoldenText(t, "error_not_found_checkpoint.txt", r.Stderr)
}

// A revert's dry run, human and --json, with a conflict written as
// markers, a path taken back and one already as the turn found it; and
// its refusal's envelope.
func TestGolden_RevertDryRun(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\ntwo\nthree\n")
	env.Write("b.txt", "b\n")
	env.Commit("files")
	env.Turn("a1", func() {
		env.Write("a.txt", "one\nTWO by t1\nthree\n")
		env.Write("b.txt", "b by t1\n")
		env.Write("c.txt", "c by t1\n")
	})
	env.Turn("a1", func() {
		env.Write("a.txt", "one\nTWO by t2\nthree\n")
		env.Write("b.txt", "b\n")
	})
	r := env.Venom("rollback", "--revert=t1", "--dry-run", "--json")
	require.Equal(t, 5, r.Code, r.Stdout+r.Stderr)
	env.Golden(t, "error_conflict_revert_conflicts", r.Stdout)
	env.GoldenText(t, "revert_dry_run.txt", env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--dry-run").OK(t).Stdout)
	env.Golden(t, "revert_dry_run", env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--dry-run", "--json").OK(t).Stdout)
}
