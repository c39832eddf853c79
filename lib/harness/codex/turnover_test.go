package codex

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The end of a turn as a real 0.171.0 rollout records it (task_complete
// naming the turn); a turn it does not name, a rollout cut before the
// end, and a FIFO are not ended.
func TestRolloutTurnEnded(t *testing.T) {
	real := filepath.Join("..", "..", "..", "tests", "testdata", "hooks", "codex", "rollout-0.171.0-"+thread+".jsonl")
	assert.True(t, RolloutTurnEnded(real, turn1))
	assert.True(t, RolloutTurnEnded(real, turn2))
	assert.False(t, RolloutTurnEnded(real, "01a22c93-0000-7000-8000-00000000dead"))

	data, err := os.ReadFile(real)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	first := 0
	for i, b := range data {
		if b == '\n' {
			first = i + 1
			break
		}
	}
	require.NoError(t, os.WriteFile(cut, data[:first], 0o644))
	assert.False(t, RolloutTurnEnded(cut, turn1), "only its first line: the turn has not ended")

	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	assert.False(t, RolloutTurnEnded(fifo, turn1), "a FIFO is not waited on")
}
