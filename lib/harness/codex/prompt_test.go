package codex

import (
	"os"
	"path/filepath"
	"strings"
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

// TestPrompt_LongLinePassedOver: Codex writes a tool's whole output (or
// an image) on one rollout line; a line longer than the scan's 16 MiB cap
// ended the scan, and every later turn lost its prompt. Such a line is
// passed over, and the prompts after it are still found, for a line far
// longer than the cap, and one just over it with no newline at the end
// of the file.
func TestPrompt_LongLinePassedOver(t *testing.T) {
	const thread = "01a22c93-1777-7b03-81d2-cc9f451e14c8"
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "testdata", "hooks", "codex", "rollout-0.171.0-"+thread+".jsonl"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	i := 0
	for !strings.Contains(lines[i], "TURN1") || !strings.Contains(lines[i], "item_completed") {
		i++
	}
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "30")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// The rollout: its lines, a line of 40 MiB after the first turn's, and
	// 17 MiB with no newline at the end, written a MiB at a time.
	f, err := os.Create(filepath.Join(dir, "rollout-2026-11-30T13-09-27-"+thread+".jsonl"))
	require.NoError(t, err)
	x, y := strings.Repeat("x", 1<<20), strings.Repeat("y", 1<<20)
	parts := []string{strings.Join(lines[:i+1], ""), `{"type":"response_item","payload":{"type":"function_call_output","output":"`}
	for n := 0; n < 40; n++ {
		parts = append(parts, x)
	}
	parts = append(parts, `"}}`+"\n", strings.Join(lines[i+1:], ""))
	for n := 0; n < 17; n++ {
		parts = append(parts, y)
	}
	for _, p := range parts {
		_, err := f.WriteString(p)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
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
		Adapter{}.Prompt(a, &agents.Turn{HarnessTurn: "01a22c93-4615-7e41-bfc6-61fc84931e71"}, getenv),
		"the turn after the long line")
}

// eachLine passes over exactly the lines longer than its cap, ended by a
// newline or by the end of the input, and gives every other line whole.
func TestEachLine_PassesOverLongLinesOnly(t *testing.T) {
	const max = 100 << 10 // past bufio's 64 KiB buffer
	in := "a\n" + strings.Repeat("b", max) + "\n" + strings.Repeat("c", max+1) + "\n\nd\n" + strings.Repeat("e", max+1)
	var got []string
	require.NoError(t, eachLine(strings.NewReader(in), max, func(l []byte) { got = append(got, string(l)) }))
	assert.Equal(t, []string{"a", strings.Repeat("b", max), "d"}, got)
}
