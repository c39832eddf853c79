package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
)

// transcriptAt puts a fixture where Claude Code keeps the session of cwd
// and returns the environment that finds it.
func transcriptAt(t *testing.T, fixture, session, cwd string) func(string) string {
	t.Helper()
	home := t.TempDir()
	data, err := os.ReadFile(filepath.Join(fixtures, fixture))
	require.NoError(t, err)
	dir := ProjectDir(filepath.Join(home, ".claude"), cwd)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, session+".jsonl"), data, 0o600))
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}

func TestPrompt_RealTranscriptByPromptID(t *testing.T) {
	const session = "7ed25220-ebd9-4d8a-a85d-0225263a02da"
	getenv := transcriptAt(t, "real-2.1.332-"+session+".jsonl", session, "/tmp/hz/ccproj")
	a := &agents.Agent{ID: "claude", Tree: "/tmp/hz/ccproj", Harness: "claude-code"}
	turn := &agents.Turn{Session: session, HarnessTurn: "dbe0f272-99ae-4bf0-8cce-3c13108844d3"}
	assert.Equal(t, "TURN2: change hello to hello world in hello.txt, and remember BANANA", Adapter{}.Prompt(a, turn, getenv))
	// An unknown prompt id and no harness_end: nothing, not a guess.
	assert.Empty(t, Adapter{}.Prompt(a, &agents.Turn{Session: session, HarnessTurn: "p9"}, getenv))
	// No transcript for that session.
	assert.Empty(t, Adapter{}.Prompt(a, &agents.Turn{Session: "00000000-0000-4000-8000-000000000000", HarnessTurn: "x"}, getenv))
}

// A turn recorded with another prompt id is found from its last entry;
// a subagent's prompt (a sidechain user line inside the turn) is not the
// person's.
func TestPrompt_ByHarnessEndSkipsSidechains(t *testing.T) {
	getenv := transcriptAt(t, synthID+".jsonl", synthID, "/tmp/hz/ccproj")
	a := &agents.Agent{ID: "claude", Tree: "/tmp/hz/ccproj", Harness: "claude-code", Binding: agents.Binding{Session: synthID}}
	p := Adapter{}.Prompt(a, &agents.Turn{HarnessTurn: "p2", HarnessEnd: turn2End}, getenv)
	assert.Equal(t, "Change hello to hello world. Remember BANANA.", p)
	assert.False(t, strings.Contains(p, "subagent"))
	assert.Equal(t, "Create nb.ipynb and set cell c1 to print(2).",
		Adapter{}.Prompt(a, &agents.Turn{HarnessEnd: turn3End}, getenv))
}
