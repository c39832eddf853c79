package treediff

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCut_KeepsWholeLines(t *testing.T) {
	p := cut([]byte("ab\ncd\nef\n"), 7)
	assert.Equal(t, &Patch{Text: "ab\ncd\n", Truncated: true, Bytes: 9}, p)
	assert.Equal(t, &Patch{Text: "ab\n", Bytes: 3}, cut([]byte("ab\n"), 7))
	// One long line is cut at a character boundary.
	p = cut([]byte("aé"), 2)
	assert.Equal(t, "a", p.Text)
	assert.True(t, p.Truncated)
}

func TestParse_RawAndNumstat(t *testing.T) {
	out := ":100644 100644 aaaa bbbb M\x00a\tb.txt\x00:000000 100644 0000 cccc A\x00bin\x00" +
		"2\t1\ta\tb.txt\x00-\t-\tbin\x00"
	files, err := parse([]byte(out), ".")
	assert.NoError(t, err)
	assert.Equal(t, []File{
		{Repo: ".", Path: "a\tb.txt", Change: Modify, Added: 2, Removed: 1, raw: "a\tb.txt"},
		{Repo: ".", Path: "bin", Change: Create, Binary: true, raw: "bin"},
	}, files)
}
