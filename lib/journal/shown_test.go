package journal

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/git-venom/git-venom/lib/quote"
)

// A skipped path or a submodule that is not UTF-8 carries its exact bytes
// in path_b64; one that is has none.
func TestShown_PathB64OnlyWhenNeeded(t *testing.T) {
	s := Skipped{Path: "x\xff"}.Shown()
	assert.Equal(t, "x\uFFFD", s.Path)
	assert.Equal(t, "x\xff", quote.RawPath(s.Path, s.PathB64))
	m := Submodule{Path: "sub"}.Shown()
	assert.Equal(t, "sub", m.Path)
	assert.Empty(t, m.PathB64)
}
