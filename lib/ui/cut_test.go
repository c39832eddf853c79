package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCut_EndsWithAnEllipsisWithinTheWidth(t *testing.T) {
	assert.Equal(t, "short", Cut("short", 10))
	assert.Equal(t, "a longer…", Cut("a longer label", 9))
	assert.Equal(t, 9, Width(Cut("a longer label", 9)))
	assert.Equal(t, "日本…", Cut("日本語の文", 6), "a wide character is never split")
	assert.Equal(t, "\x1b[1mbol…\x1b[0m", Cut("\x1b[1mbold text\x1b[0m", 4), "the style is closed")
}

func TestCutMiddle_KeepsTheStartAndTheEnd(t *testing.T) {
	assert.Equal(t, "claude-5f2a9c1e", CutMiddle("claude-5f2a9c1e", 20))
	got := CutMiddle("gemini-8c4d2e6f-1a3b-4c5d-9e7f-0a1b2c3d4e5f", 20)
	assert.Equal(t, "gemini-8c4…b2c3d4e5f", got)
	assert.LessOrEqual(t, Width(got), 20)
}

func TestCutMiddle_KeepsTheStyle(t *testing.T) {
	assert.Equal(t, "\x1b[1mabc…xyz\x1b[0m", CutMiddle("\x1b[1mabcdefghijklmnopqrstuvwxyz\x1b[0m", 7))
}
