package tests

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutput_RollbackFitsEightyColumns (issue 28 item 6): the outside-edit
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
// what cannot be cut: a command on a line of its own, to copy whole, and
// a path or id alone on its line.
func fitsEighty(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		rest := strings.TrimPrefix(strings.TrimPrefix(strings.TrimLeft(l, " "), "undo: "), "fix: ")
		if strings.HasPrefix(rest, "git venom-") || !strings.Contains(rest, " ") {
			continue
		}
		if !assert.LessOrEqual(t, utf8.RuneCountInString(l), 80, "%s: %q\n%s", what, l, out) {
			return // one report an output
		}
	}
}

// TestOutput_EveryVerbFitsEightyColumns (issue 28 item 6): every human
// output of every verb fits 80 columns with harness-session agent ids,
// a fork's longer one, a long label, nested paths and a remote: long ids
// and paths move to a line of their own, or wrap in their column.
// Before: events 121, agents 89, fork 149, push 167, hook install 168,
// the codex note 506, the error naming three agents 164.
func TestOutput_EveryVerbFitsEightyColumns(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	const nested = "src/components/deeply/nested/folder/widget-with-a-long-name.txt"
	env.Write(nested, "a\n")
	env.Commit("base")
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil)) // agent claude, harness claude-code
	const a, fork, other = "claude-5f2a9c1e", "claude-5f2a9c1e-review-0123abcd", "gemini-0123abcd"
	var outs []Result
	run := func(what string, r Result) Result {
		t.Helper()
		fitsEighty(t, what+" (stdout)", r.Stdout)
		fitsEighty(t, what+" (stderr)", r.Stderr)
		outs = append(outs, r)
		return r
	}
	ck := func(args ...string) Result {
		t.Helper()
		return run(strings.Join(args, " "), env.Venom("checkpoint", args...))
	}
	ck("--agent="+a, "--reason=turn_start", "--turn=t1").OK(t)
	env.Write(nested, "b\n")
	ck("--agent="+a, "--reason=turn_end", "--turn=t1",
		"--label=a fairly long label for the end of the agent's first turn, saying what it did").OK(t)
	ck("fork", "--agent="+fork, "--from="+a).OK(t)
	ck("--agent=" + other).OK(t)
	ck("list").Fails(t, 2, "invalid_params.agent")
	for _, v := range []string{"agents", "events", "doctor"} {
		ck(v).OK(t)
	}
	ck("list", "--agent="+a).OK(t)
	env.Git("add", "-A")
	env.Git("commit", "-qm", "the agent's work")
	ck("explain", "HEAD").OK(t)
	for _, args := range [][]string{{"k1", "--stat"}, {"k1", "--name-only"}, {"--blame=" + nested}} {
		run("diff "+strings.Join(args, " "), env.Venom("diff", append([]string{"--agent=" + a}, args...)...)).OK(t)
	}
	for _, h := range []string{"claude-code", "gemini-cli", "codex"} {
		ck("hook", "install", h, "--dry-run").OK(t)
	}
	ck("hook", "install", "claude-code").OK(t)
	ck("hook", "uninstall", "claude-code").OK(t)
	ck("hook", "uninstall", "gemini-cli").OK(t)
	remote := filepath.Join(env.Root, "remotes", "a-remote-with-a-long-name.git")
	env.Git("init", "-q", "--bare", remote)
	env.Git("remote", "add", "origin-with-a-long-name", remote)
	ck("push", "origin-with-a-long-name", "--agent="+a).OK(t)
	ck("fetch", "origin-with-a-long-name").OK(t)
	ck("clean", "--agent="+other).OK(t)
	env.Git("config", "--global", "venom.keep", "1")
	ck("prune").OK(t)
	ck("events").OK(t)
	for _, v := range []string{"take", "list", "prune", "clean", "events", "doctor", "agents", "fork", "push",
		"fetch", "explain", "hook"} {
		ck(v, "-h").OK(t)
	}
	run("rollback -h", env.Venom("rollback", "-h")).OK(t)
	run("diff -h", env.Venom("diff", "-h")).OK(t)

	// What was wrapped is all there: the fork's command works as printed.
	var forkOut string
	for _, r := range outs {
		if strings.Contains(r.Stdout, "Forked ") {
			forkOut = r.Stdout
		}
	}
	m := regexp.MustCompile(`(?m)^  (git venom-rollback .*)$`).FindStringSubmatch(forkOut)
	require.NotNil(t, m, forkOut)
	env.Venom("rollback", append(strings.Fields(m[1])[2:], "--dry-run")...).OK(t)
}
