package explain

import (
	"strings"
	"testing"
	"unicode/utf8"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/assert"
)

func oid(b byte) *git.Oid {
	var id git.Oid
	id[0] = b
	return &id
}

func set(lines ...string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lines {
		m[l] = true
	}
	return m
}

func TestCarried(t *testing.T) {
	c := &lineCache{sets: map[git.Oid]map[string]bool{
		*oid(1): set("a", "}", ""),
		*oid(2): set("a", "}", "", "new line", "other"),
		*oid(3): nil, // too large, or unreadable
	}}
	turn := change{old: oid(1), new: oid(2)}
	carried := func(h hunk, ch change) []bool {
		want, removal := h.lines()
		return c.carried(want, removal, ch)
	}
	added := func(l ...string) hunk { return hunk{added: l} }
	assert.Equal(t, []bool{true, false}, carried(added("new line", "}", ""), turn),
		"its end has the line and its start lacked it; } was there before; blank lines do not count")
	assert.Equal(t, []bool{true, false}, carried(added("new line", "missing"), turn), "its end lacks one")
	assert.Equal(t, []bool{false, false}, carried(added("}", "a"), turn), "its start had them all")
	assert.Equal(t, []bool{false}, carried(added(""), turn), "a blank line alone is nobody's")
	assert.Equal(t, []bool{true}, carried(hunk{removed: []string{"new line"}}, change{old: oid(2), new: oid(1)}),
		"a removal: the start had it, the end lacks it")
	assert.Equal(t, []bool{true}, carried(added("new line"), change{new: oid(2)}), "a file the turn created")
	assert.Equal(t, []bool{false}, carried(hunk{removed: []string{"a"}}, turn), "the turn kept the removed line")
	assert.Equal(t, []bool{false}, carried(added("new line"), change{old: oid(3), new: oid(2)}),
		"a start too large to read proves nothing")
}

func TestFirstLine(t *testing.T) {
	assert.Nil(t, firstLine(""))
	assert.Nil(t, firstLine("\n  \n"))
	assert.Equal(t, "do it", *firstLine("\n  do it  \nand more"))
	long := firstLine(strings.Repeat("é", 300))
	assert.Equal(t, maxPrompt, utf8.RuneCountInString(*long))
	assert.True(t, strings.HasSuffix(*long, "…"))
}
