package ui

import (
	"strings"
	"testing"

	"github.com/fatih/color"
	"github.com/stretchr/testify/assert"
)

func TestWidth_CountsWhatTheTerminalShows(t *testing.T) {
	bold := color.New(color.Bold)
	bold.EnableColor()
	assert.Equal(t, 2, Width(bold.Sprint("k1")))
	assert.Equal(t, 4, Width("日本"))
	assert.Equal(t, 1, Width("e\u0301"))
	assert.Equal(t, 5, Width("\x1b]8;;http://x\x1b\\link5\x1b]8;;\x1b\\"))
}

func TestTable_ColumnsLineUpWithColourAndWideText(t *testing.T) {
	bold := color.New(color.Bold)
	bold.EnableColor()
	var b strings.Builder
	tb := NewTable(&b)
	tb.Row(bold.Sprint("ID"), "LABEL", "N")
	tb.Row(bold.Sprint("k10"), "日本語", "1")
	tb.Row("k2", "x", "22")
	tb.Note("(a note)")
	assert.NoError(t, tb.Flush())
	plain := ansi().ReplaceAllString(b.String(), "")
	assert.Equal(t, "ID   LABEL   N\nk10  日本語  1\nk2   x       22\n(a note)\n", plain)
}

func TestTable_FitMovesAWideFirstCellAndWrapsTheLast(t *testing.T) {
	var b strings.Builder
	tb := NewTable(&b)
	tb.Fit(30)
	tb.Row("ID", "N", "LABEL")
	tb.Row("k1", "1", "a label that is too long for the room")
	tb.Row("a-very-long-agent-id-0123456789", "2", "x")
	tb.RowWhole("", "", "git venom-checkpoint prune --now")
	assert.NoError(t, tb.Flush())
	assert.Equal(t, "ID  N  LABEL\n"+
		"k1  1  a label that is too\n"+
		"       long for the room\n"+
		"a-very-long-agent-id-0123456789\n"+
		"    2  x\n"+
		"       git venom-checkpoint prune --now\n", b.String())
}
