package ui

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fatih/color"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestTable_FitCutsOneColumn(t *testing.T) {
	var b bytes.Buffer
	tb := NewTable(&b)
	tb.Row("ID", "LABEL")
	tb.Row("k1", "a label much too long for the twenty columns")
	tb.Note("a note is never cut, however long it is")
	tb.Fit(20, 1, Cut)
	require.NoError(t, tb.Flush())
	assert.Equal(t, "ID  LABEL\nk1  a label much to…\na note is never cut, however long it is\n", b.String())
}
