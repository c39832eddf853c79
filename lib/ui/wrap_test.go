package ui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWrap_WordsMoveLongWordsStandAlone(t *testing.T) {
	assert.Equal(t, "short line", Wrap("short line", 20, "  "))
	assert.Equal(t, "Installed hooks in\n  /a/very/long/path/that/is/wide\n  (new file).",
		Wrap("Installed hooks in /a/very/long/path/that/is/wide (new file).", 20, "  "))
	assert.Equal(t, "  one two\n    three", Wrap("  one two three", 10, "  "), "the line's own indent is kept")
	assert.Equal(t, "a\nb c", Wrap("a\nb c", 3, ""), "lines apart stay apart")
}

func TestPack_PartsAreNeverSplit(t *testing.T) {
	assert.Equal(t, "12 x a/k1\n    \"a label\"", pack("", []string{"12", "x", "a/k1", `"a label"`}, 10, "    "))
}

func TestPathLine_ALongPathStandsAlone(t *testing.T) {
	assert.Equal(t, "Would create /a b/c:", PathLine("Would create /a b/c:", "Would create:", "/a b/c"))
	long := "/home/someone/src/" + strings.Repeat("x", 60) + "/.claude/settings.local.json"
	assert.Equal(t, "Would create:\n  "+long, PathLine("Would create "+long+":", "Would create:", long))
}
