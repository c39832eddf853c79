package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// widthLabel is the label of each turn's checkpoints in widthRepo.
const widthLabel = "Refactor the reconciliation adapters to use the new ledger snapshot API and make the webhook tests deterministic"

// widthRepo builds a repository as a person has it after a week with
// agents: paths of 60 to 150 characters, two harness sessions with long
// ids sharing the work tree, a person's own agent, many turns with long
// labels, an excluded folder, commits, a remote.
func widthRepo(t *testing.T) (*Env, []string) {
	env := NewEnv(t)
	long := []string{
		"services/payments-gateway/internal/reconciliation/adapters/ledger_snapshot.go",                                                         // 77
		"services/payments-gateway/internal/reconciliation/adapters/settlement/providers/stripe/webhook_signature_verification_test.go",         // 126
		"frontend/packages/design-system/src/components/data-display/virtualized-table/hooks/useColumnResizeObserverWithStickyHeaders.test.tsx", // 138
		"docs/architecture/decisions/0042-move-the-reconciliation-pipeline-to-event-sourcing-with-idempotent-consumers-and-outbox.md",           // 124
		"infrastructure/terraform/modules/networking/private-service-connect/regional-endpoints/europe-west4/variables.tf",                      // 114
	}
	for i, p := range long {
		require.GreaterOrEqual(t, len(p), 60)
		env.Write(p, fmt.Sprintf("base %d\n", i))
	}
	env.Commit("base")
	env.SetGlobal("venom.exclude", "node_modules")
	env.Write("frontend/node_modules/left-pad/index.js", "module.exports = 1\n")
	env.Write(".gitignore", "node_modules/\n")
	env.Commit("ignore node_modules")

	agents := []string{"claude-5f2a9c1e", "codex-0197a3b2", "gemini-8c4d2e6f-1a3b-4c5d-9e7f-0a1b2c3d4e5f"}
	for turn := 0; turn < 4; turn++ {
		for j, a := range agents {
			env.Venom("checkpoint", "--agent="+a, "--reason=turn_start", "--label="+widthLabel, "--json").OK(t)
			env.Write(long[(turn+j)%len(long)], fmt.Sprintf("turn %d by %s\n", turn, a))
			env.Write(long[(turn+j+1)%len(long)]+".new", "new\n")
			env.Venom("checkpoint", "--agent="+a, "--reason=turn_end", "--label="+widthLabel, "--json").OK(t)
		}
	}
	env.Git("add", "-A")
	env.Commit("reconciliation: ledger snapshot adapters")
	return env, long
}

// TestOutput_EveryVerbFitsEightyColumns: every verb's human output, its
// errors and its help fit 80 columns (runes, colour stripped) over a
// repository of long paths and long agent ids, as git's own output does:
// one row or event a line, labels cut with an ellipsis, a long path on a
// line of its own. --json keeps every value whole.
func TestOutput_EveryVerbFitsEightyColumns(t *testing.T) {
	t.Parallel()
	env, long := widthRepo(t)
	claude := "--agent=claude-5f2a9c1e"
	var wide []string
	check := func(r Result, what string) Result {
		t.Helper()
		for _, s := range []string{r.Stdout, r.Stderr} {
			wide = append(wide, overEighty(what, s)...)
		}
		return r
	}
	run := func(cmd string, args ...string) Result {
		t.Helper()
		r := env.Venom(cmd, args...)
		require.NotContains(t, r.Stderr, "panic:")
		return check(r, "git venom-"+cmd+" "+strings.Join(args, " "))
	}

	// The overview and every verb's help.
	check(env.GitRaw("venom"), "git venom")
	for _, v := range []string{"take", "list", "prune", "clean", "events", "doctor", "agents", "fork", "hook", "push", "fetch", "explain", "help"} {
		run("checkpoint", v, "-h")
	}
	run("checkpoint", "-h")
	run("checkpoint", "hook", "install", "-h")
	run("checkpoint", "hook", "uninstall", "-h")
	run("rollback", "-h")
	run("diff", "-h")

	// Checkpoint and its sub-verbs.
	env.Write(long[1], "a person's edit\n")
	run("checkpoint", "--agent=me", "--label=Before I try the reconciliation refactor myself, with the long label kept")
	run("checkpoint", "--agent=me")
	run("checkpoint", "list")
	run("checkpoint", "list", claude)
	// One row a checkpoint, its label cut; --json has it whole.
	table := run("checkpoint", "list", claude).OK(t).Stdout
	rows := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	var listed ListResult
	env.Venom("checkpoint", "list", claude, "--json").OK(t).JSON(t, &listed)
	require.Len(t, rows, 1+len(listed.Checkpoints), table)
	assert.Regexp(t, `^k8 +turn_end +t4 .* Refactor the reconcil[^ ]* [^"]*…$`, rows[1])
	assert.Equal(t, widthLabel, *listed.Checkpoints[0].Label)
	run("checkpoint", "list", claude, "-n", "3")
	run("checkpoint", "list", claude, "--before=k3")
	run("checkpoint", "list", claude, "--turn=t99")
	run("checkpoint", "agents")
	// One line an event; --json has each label whole.
	evs := run("checkpoint", "events").OK(t).Stdout
	js := env.Venom("checkpoint", "events", "--json").OK(t).Stdout
	assert.Equal(t, strings.Count(js, "\n"), strings.Count(evs, "\n"))
	assert.Equal(t, 4*3*2, strings.Count(js, `"label":"`+widthLabel+`"`))
	assert.Regexp(t, `(?m)^\d+ 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ agent\.checkpoint codex-0197a3b2/k1 turn_start "Refa[^"]*…"$`, evs)
	assert.Regexp(t, `(?m)^\d+ \S+ agent\.turn_started gemini-8c4d2…2c3d4e5f/t1$`, evs)
	// One row an agent, a long id cut in its middle; TREES names it whole.
	ag := run("checkpoint", "agents").OK(t).Stdout
	assert.Regexp(t, `(?m)^gemini-8c4\S*…\S*4e5f +settled`, ag)
	assert.Contains(t, ag, "\n  claude-5f2a9c1e, codex-0197a3b2,")
	assert.Contains(t, ag, "gemini-8c4d2e6f-1a3b-4c5d-9e7f-0a1b2c3d4e5f")
	run("checkpoint", "events", "--resources=agent:claude-5f2a9c1e")
	run("checkpoint", "explain", "HEAD")
	run("checkpoint", "doctor")
	run("checkpoint", "hook", "install", "claude-code", "--dry-run")
	run("checkpoint", "hook", "install", "codex", "--dry-run")
	run("checkpoint", "hook", "install", "gemini-cli", "--dry-run")
	run("checkpoint", "hook", "uninstall", "claude-code")
	run("checkpoint", "hook", "install", "claude-code")
	run("checkpoint", "hook", "install", "claude-code")
	run("checkpoint", "hook", "uninstall", "claude-code", "--dry-run")
	run("checkpoint", "hook", "uninstall", "claude-code")
	run("checkpoint", "prune", "--dry-run")
	run("checkpoint", "prune", "--keep=-1")
	run("checkpoint", "hook", "install", "claude")
	run("checkpoint", "clean", "--agent=me", "--dry-run")
	run("checkpoint", "fork", "--agent=claude-5f2a9c1e-fork-for-the-webhook-tests", "--parent=claude-5f2a9c1e")
	remote := env.Root + "/remote-with-a-rather-long-name-for-the-team-shared-checkpoints.git"
	env.run(env.Root, nil, "git", "init", "-q", "--bare", remote).OK(t)
	env.Git("remote", "add", "origin", remote)
	run("checkpoint", "push", "origin", claude)
	run("checkpoint", "fetch", "origin")

	// venom-diff.
	run("diff", claude, "k1", "--stat")
	run("diff", claude, "k1", "--name-only")
	run("diff", claude, "k1", "k8", "--stat")
	// --blame: the file's own lines are as long as they are (git blame
	// cuts none); what comes before each leaves the text 20 columns.
	for _, l := range strings.Split(env.Venom("diff", "--blame", long[0]).OK(t).Stdout, "\n") {
		if i := strings.Index(l, ") "); i >= 0 {
			assert.LessOrEqual(t, utf8.RuneCountInString(l[:i+2]), 60, l)
		}
	}

	// Rollback: refusal, plan, real, undo.
	run("rollback", claude, "k3", "--dry-run")
	dry := run("rollback", claude, "k3", "--outside=keep", "--dry-run").Stdout
	m := regexp.MustCompile(`--plan=p1-[0-9a-f]{16}`).FindString(dry)
	require.NotEmpty(t, m, dry)
	run("rollback", claude, "k3", "--outside=keep", m)
	run("rollback", "--undo", claude, "--dry-run")
	run("rollback", claude, "k3", "--plan=p1-0000000000000000")
	run("rollback", "--agent=codex-0197a3b2", "k1", "--restore=files", "--dry-run", "--outside=keep")
	run("checkpoint", "clean", "--agent=me")

	// A plan gone stale between the dry run and the real call.
	env.Write(long[2], "changed after the dry run\n")
	dry = run("rollback", claude, "k5", "--outside=keep", "--dry-run").Stdout
	m = regexp.MustCompile(`--plan=p1-[0-9a-f]{16}`).FindString(dry)
	require.NotEmpty(t, m, dry)
	env.Write(long[2], "changed again, after the dry run\n")
	run("rollback", claude, "k5", "--outside=keep", m)
	// At a terminal: the plan, its summary, the outside-edit question,
	// the answers.
	extra := env.Extra
	env.Extra = append(append([]string(nil), extra...), "GIT_PAGER=cat")
	for _, answers := range [][]string{{"", "n"}, {"o", "n"}} {
		screen, _ := env.ptyRunLine(t, answers, "git venom-rollback "+claude+" k3")
		wide = append(wide, overEighty("git venom-rollback "+claude+" k3 (at a terminal)", strings.ReplaceAll(screen, "\r", ""))...)
	}
	env.Extra = extra
	// Every kind of event so far: rollbacks, relabels, prunes, cleans.
	env.Venom("checkpoint", "--agent=codex-0197a3b2", "--label=A second label for the same tree, just as long as the first one was").OK(t)
	env.Venom("checkpoint", "--agent=codex-0197a3b2", "--label="+widthLabel).OK(t)
	run("checkpoint", "prune", "--agent=gemini-8c4d2e6f-1a3b-4c5d-9e7f-0a1b2c3d4e5f", "--keep=1")
	run("checkpoint", "events")
	run("checkpoint", "explain", "HEAD~1")
	run("checkpoint", "explain", "HEAD~2..HEAD")

	// Errors: usage, unknown names, no repository.
	run("diff", claude, "HEAD")
	first := NewEnv(t)
	r := first.Venom("checkpoint")
	wide = append(wide, overEighty("git venom-checkpoint (no agent yet)", r.Stdout+r.Stderr)...)
	run("checkpoint", "--reason=turnstart", claude)
	run("checkpoint", "list", "--agent=claude-5f2a9c1f")
	run("checkpoint", "lisst")
	run("checkpoint", "list", "--nope")
	run("rollback", claude, "k99", "--dry-run")
	run("rollback", claude)
	run("diff", claude, "t99")
	run("rollback", "k1", "--dry-run")
	check(env.VenomIn(env.Root, nil, "checkpoint", claude), "no repository")
	check(env.VenomIn(env.Root, nil, "rollback", claude, "k1", "--dry-run"), "no repository")
	check(env.VenomIn(env.Root, nil, "diff", claude, "k1"), "no repository")

	assert.Empty(t, wide, "lines over 80 columns:\n%s", strings.Join(wide, "\n"))
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// overEighty lists out's lines wider than 80 columns, colour stripped,
// but for what cannot be cut: a command alone on its line, to copy
// whole, and a path or id alone on its line.
// wholeCommand reports whether a line (its prefix taken off) is a
// command alone, to copy whole: one followed by words that say what it
// does ("git venom-checkpoint --agent=a1   registers ...") is text that
// must fit like any other.
func wholeCommand(rest string) bool {
	return strings.HasPrefix(rest, "git venom-") && !commandThenWords.MatchString(rest)
}

var commandThenWords = regexp.MustCompile(`\S   +\S`)

func overEighty(what, out string) []string {
	var wide []string
	for _, l := range strings.Split(ansiEscape.ReplaceAllString(out, ""), "\n") {
		rest := strings.TrimLeft(l, " ")
		for _, p := range []string{"undo: ", "fix: ", "hint: ", "note: ", "$ "} {
			rest = strings.TrimLeft(strings.TrimPrefix(rest, p), " ")
		}
		if wholeCommand(rest) || !strings.Contains(rest, " ") {
			continue
		}
		if n := utf8.RuneCountInString(l); n > 80 {
			wide = append(wide, fmt.Sprintf("%s: %d: %s", what, n, l))
		}
	}
	return wide
}
