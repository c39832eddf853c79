package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hintCommands are the commands a refusal's hint lines print, each on a
// line of its own ("hint:   git venom-..."), in order.
func hintCommands(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		h, ok := strings.CutPrefix(line, "hint: ")
		if !ok {
			continue
		}
		if c := strings.TrimSpace(h); strings.HasPrefix(c, "git venom-") {
			out = append(out, c)
		}
	}
	return out
}

// TestRollback_RefusedDryRunHintsRunAsPrinted: a refused dry run's hints
// that say how to go on print the whole command, the agent, the
// checkpoint or turn and the paths as typed, the flags changed; each is
// run here as printed, through the shell, and goes on. No hint is a bare
// flag left for the person to fit into a command.
func TestRollback_RefusedDryRunHintsRunAsPrinted(t *testing.T) {
	t.Parallel()
	type refusal struct {
		args []string
		code int
		want []string // the commands, in order
	}
	run := func(t *testing.T, env *Env, cases []refusal) {
		t.Helper()
		for _, c := range cases {
			r := env.Venom("rollback", append([]string{"--dry-run"}, c.args...)...)
			require.Equal(t, c.code, r.Code, "%v\n%s", c.args, r.Stderr)
			for _, line := range strings.Split(r.Stderr, "\n") {
				if h, ok := strings.CutPrefix(line, "hint: "); ok {
					assert.False(t, strings.HasPrefix(h, "--"), "%v: a bare flag: %q", c.args, line)
					assert.NotContains(t, h, "<", "%v: a placeholder: %q", c.args, line)
				}
			}
			got := hintCommands(r.Stderr)
			assert.Equal(t, c.want, got, "%v\n%s", c.args, r.Stderr)
			for _, cmd := range got {
				res := env.run(env.Dir, nil, "sh", "-c", cmd)
				assert.Equal(t, 0, res.Code, "%v: hint %q\n%s", c.args, cmd, res.Stderr)
			}
		}
	}

	t.Run("revert", func(t *testing.T) {
		t.Parallel()
		env, _ := rewrittenRepo(t)
		run(t, env, []refusal{
			{[]string{"--revert=t2"}, 5, []string{
				"git venom-rollback --revert=t2 --conflicts=markers --dry-run",
				"git venom-diff --agent=a1 --from=k3"}},
			{[]string{"--agent=a1", "--revert=t2"}, 5, []string{
				"git venom-rollback --agent=a1 --revert=t2 --conflicts=markers --dry-run",
				"git venom-diff --agent=a1 --from=k3"}},
			{[]string{"--revert=t1", "k1"}, 2, []string{
				"git venom-rollback --revert=t1 --dry-run",
				"git venom-rollback k1 --dry-run"}},
			{[]string{"--revert=t1", "--restore=all"}, 2, []string{"git venom-rollback --revert=t1 --dry-run"}},
			{[]string{"--revert=t1", "--outside=keep"}, 2, []string{"git venom-rollback --revert=t1 --dry-run"}},
			{[]string{"--revert=t1", "--keep-head"}, 2, []string{"git venom-rollback --revert=t1 --dry-run"}},
			{[]string{"--revert=k3"}, 2, []string{"git venom-rollback --revert=k3..last --dry-run"}},
			{[]string{"--revert=k2..k1"}, 2, []string{"git venom-rollback --revert=k1..k2 --dry-run"}},
			{[]string{"--conflicts=markers", "k1"}, 2, []string{"git venom-rollback k1 --dry-run"}},
			{[]string{"k1", "--restore=all", "--", "f.txt"}, 2, []string{"git venom-rollback k1 --dry-run -- :/f.txt"}},
		})
		// After a revert, --undo has one to undo.
		env.revert("--revert=t1")
		run(t, env, []refusal{
			{[]string{"--revert=t3", "--undo"}, 2, []string{
				"git venom-rollback --undo --dry-run",
				"git venom-rollback --revert=t3 --dry-run"}},
		})
	})

	t.Run("head", func(t *testing.T) {
		t.Parallel()
		env := headEnv(t, func(env *Env) {
			env.Git("update-ref", "refs/remotes/origin/x", "HEAD")
			env.Git("symbolic-ref", "HEAD", "refs/remotes/origin/x")
		})
		run(t, env, []refusal{
			{[]string{"--agent=a1", "k1", "--restore=files"}, 5, []string{
				"git venom-rollback --agent=a1 k1 --restore=files --keep-head --dry-run"}},
		})
	})
}
