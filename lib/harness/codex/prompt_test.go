package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
)

func TestPrompt_FromTheRollout(t *testing.T) {
	const thread = "01a22c93-1777-7b03-81d2-cc9f451e14c8"
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "testdata", "hooks", "codex", "rollout-0.171.0-"+thread+".jsonl"))
	require.NoError(t, err)
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "30")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rollout-2026-11-30T13-09-27-"+thread+".jsonl"), data, 0o644))
	getenv := func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}
	a := &agents.Agent{ID: "cx", Harness: "codex", Binding: agents.Binding{Session: thread}}
	assert.Equal(t, "TURN1: create hello.txt and remember APPLE",
		Adapter{}.Prompt(a, &agents.Turn{HarnessTurn: "01a22c93-1812-7df0-9ee4-f5a15fed6464"}, getenv))
	assert.Equal(t, "TURN2: change hello to hello world, add notes/b.txt, remember BANANA",
		Adapter{}.Prompt(a, &agents.Turn{Session: thread, HarnessTurn: "01a22c93-4615-7e41-bfc6-61fc84931e71"}, getenv))
	assert.Empty(t, Adapter{}.Prompt(a, &agents.Turn{HarnessTurn: "no-such-turn"}, getenv))
	assert.Empty(t, Adapter{}.Prompt(a, &agents.Turn{Session: "../x", HarnessTurn: "t"}, getenv), "a thread id is no path")
}
