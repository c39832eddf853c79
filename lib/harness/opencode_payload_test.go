package harness

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/harness/opencode"
)

// The payloads OpenCode's plugin sent in a real run (tests/testdata/hooks/
// opencode) read as the events the hook acts on: chat.message starts the
// turn keyed by the user message id, session.idle ends that turn,
// tool.execute.after is an edit, session.created binds the session.
func TestParseHook_OpenCodePlugin(t *testing.T) {
	want := map[string]struct{ event, key, tool string }{
		"session-created.json":  {SessionStart, "", ""},
		"chat-message.json":     {UserPromptSubmit, "msg_24445a8e1001YRXC2MBa7sWJRf", ""},
		"tool-after-write.json": {PostToolUse, "", "write"},
		"tool-after-edit.json":  {PostToolUse, "", "edit"},
		"tool-after-bash.json":  {PostToolUse, "", "bash"},
		"session-idle.json":     {Stop, "msg_24445a8e1001YRXC2MBa7sWJRf", ""},
	}
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(hookFixtures, "opencode", "hooks", name))
		require.NoError(t, err)
		p, err := ParseHook(b, &opencode.Kind)
		require.NoError(t, err, name)
		p.Canonical(&opencode.Kind)
		assert.Equal(t, w.event, p.Event, name)
		assert.Equal(t, w.key, p.TurnKey(), name)
		assert.Equal(t, "ses_dbbba5807ffeqTWoujaOLey66H", p.SessionID, name)
		assert.Equal(t, "/tmp/oc/repo", p.Cwd, name)
		assert.Equal(t, w.tool, p.ToolName, name)
	}
	b, err := os.ReadFile(filepath.Join(hookFixtures, "opencode", "hooks", "tool-after-edit.json"))
	require.NoError(t, err)
	p, err := ParseHook(b, &opencode.Kind)
	require.NoError(t, err)
	assert.Equal(t, []string{"/tmp/oc/repo/c.txt"}, opencode.Kind.Edits(p.ToolName, p.ToolInput))
}
