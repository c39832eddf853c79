package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRollback_ClaudeUndoRunsAsPrinted: after a Claude Code rollback that
// rewinds the conversation, which goes on in a new session, the success
// line's undo restores files only, says so (--restore=files) and runs as
// printed. With the recorded transcript, and with an empty one (no turn
// end found), where the refusal of t1 says what cannot be rewound (turn
// t1, and why), not that the harness cannot.
func TestRollback_ClaudeUndoRunsAsPrinted(t *testing.T) {
	t.Parallel()
	for _, transcript := range []string{"recorded", "empty"} {
		t.Run(transcript, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
			env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
			env.Write("hello.txt", "hello\n")
			env.Hook("claude-code", writeTool(env, "p1", "hello.txt"))
			p := env.Transcript(claudeSession, t1End)
			if transcript == "empty" {
				require.NoError(t, os.WriteFile(p, nil, 0o600))
			}
			env.Hook("claude-code", env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p1"}))
			dry := env.Venom("rollback", "--agent=claude", "k1", "--dry-run").OK(t).Stdout
			require.Contains(t, dry, "Conversation: goes back to before the first turn; drops t1.")
			m := regexp.MustCompile(`(?m)^  git venom-rollback (.*--plan=p1-[0-9a-f]{16})$`).FindStringSubmatch(dry)
			require.NotNil(t, m, dry)
			done := env.Venom("rollback", strings.Fields(m[1])...).OK(t).Stdout
			require.NoFileExists(t, env.Path("hello.txt"))
			// t1, which the rollback dropped, cannot come back.
			if transcript == "empty" {
				r := env.Venom("rollback", "--agent=claude", "t1", "--dry-run")
				r.Fails(t, 10, "unsupported.harness_capability")
				assert.Contains(t, r.Stderr, "error: unsupported.harness_capability: the conversation cannot go back to t1\n"+
					"hint: its end is not in the Claude Code transcript\n")
				assert.NotContains(t, r.Stderr, "harness cannot")
				fitsEighty(t, "t1 refused", r.Stderr)
			}
			u := regexp.MustCompile(`(?m)^  undo: git venom-rollback (.*)$`).FindStringSubmatch(done)
			require.NotNil(t, u, done)
			assert.Equal(t, "--undo --agent=claude --restore=files", u[1])
			// As printed, its dry run, then the plan that prints.
			undoDry := env.Venom("rollback", append(strings.Fields(u[1]), "--dry-run")...).OK(t).Stdout
			pl := regexp.MustCompile(`(?m)^  git venom-rollback (.*--plan=p1-[0-9a-f]{16})$`).FindStringSubmatch(undoDry)
			require.NotNil(t, pl, undoDry)
			env.Venom("rollback", strings.Fields(pl[1])...).OK(t)
			assert.Equal(t, "hello\n", env.Read("hello.txt"))
			assert.Equal(t, "?? hello.txt", env.Git("status", "--porcelain=v1", "--", "hello.txt"))
		})
	}
}
