package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecurity_HookPayloadCwdNamesAnotherRepository: the hook chose its
// repository by the payload's cwd, so a payload naming another repository
// (an agent that cd'd there, a user-scope hook, anyone's payload)
// registered an agent there and captured its untracked .env into its
// object store. The hook works on the worktree its
// harness runs it in; a cwd outside it is refused, one inside it (a
// subfolder) is followed.
func TestSecurity_HookPayloadCwdNamesAnotherRepository(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	other := NewEnv(t)
	other.Write(".env", "AWS_SECRET=abc\n")
	payload := func(cwd string) string {
		b, err := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": "BeforeAgent", "cwd": cwd,
			"prompt": "hi", "transcript_path": "", "timestamp": "2026-12-01T18:00:00.000Z"})
		require.NoError(t, err)
		return string(b)
	}

	r := env.Hook("gemini-cli", payload(other.Dir))
	assert.Contains(t, r.Stderr, "invalid_params.hook_payload")
	assert.Contains(t, r.Stderr, other.Dir)
	assert.Empty(t, other.Git("for-each-ref", "refs/venom"), "the other repository got checkpoints")
	_, err := os.Stat(filepath.Join(other.Dir, ".git", "venom"))
	assert.True(t, os.IsNotExist(err), "the other repository got venom state")
	assert.Empty(t, env.Git("for-each-ref", "refs/venom"), "a refused payload still captured")

	// A subfolder of the worktree the hook runs in is its own.
	env.Write("sub/x.txt", "x\n")
	r = env.Hook("gemini-cli", payload(env.Path("sub")))
	assert.NotContains(t, r.Stderr, "invalid_params")
	assert.NotEmpty(t, env.Git("for-each-ref", "refs/venom/checkpoints"), "%s", r.Stderr)
}
