package ignore

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExcluder_AgreesWithGit: the files an Excluder keeps are the files git
// lists as untracked with the same patterns as core.excludesFile, and each
// excluded file is reported at its shallowest excluded folder.
func TestExcluder_AgreesWithGit(t *testing.T) {
	patterns := []string{"node_modules/", "*.log\n!keep.log", "/build/", "docs/**/*.tmp", `we\[ird\]`}
	files := []string{
		"a.txt", "node_modules/x/index.js", "node_modules/keep.log", "web/node_modules/y.js",
		"err.log", "sub/keep.log", "sub/other.log", "build/out.o", "sub/build/out.o",
		"docs/a/b/c.tmp", "docs/c.tmp", "we[ird]", "weird", "src/node_modules.txt",
	}
	r := newGitRepo(t)
	for _, f := range files {
		p := filepath.Join(r.top, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	var content []byte
	for _, p := range patterns {
		content = append(content, p+"\n"...)
	}
	require.NoError(t, os.WriteFile(r.excludesFile, content, 0o644))

	x := NewExcluder(patterns)
	var kept []string
	at := map[string]string{}
	for _, f := range files {
		if a, ok := x.Excluded(f, false); ok {
			at[f] = a
		} else {
			kept = append(kept, f)
		}
	}
	sort.Strings(kept)
	assert.Equal(t, r.untrackedByGit(t), kept)
	assert.Equal(t, map[string]string{
		"node_modules/x/index.js": "node_modules/", "node_modules/keep.log": "node_modules/",
		"web/node_modules/y.js": "web/node_modules/", "err.log": "err.log", "sub/other.log": "sub/other.log",
		"build/out.o": "build/", "docs/a/b/c.tmp": "docs/a/b/c.tmp", "docs/c.tmp": "docs/c.tmp", "we[ird]": "we[ird]",
	}, at)
}

func TestExcluder_NoneAndEscape(t *testing.T) {
	assert.Nil(t, NewExcluder(nil))
	assert.Nil(t, NewExcluder([]string{"# only a comment", ""}))
	_, ok := (*Excluder)(nil).Excluded("a", false)
	assert.False(t, ok)
	for _, p := range []string{"node_modules", "a b/c*d?", "x[1]/!y#", `back\slash`} {
		x := NewExcluder([]string{EscapePath(p, true)})
		at, ok := x.Excluded(p+"/f", false)
		assert.True(t, ok, p)
		assert.Equal(t, p+"/", at)
		_, ok = x.Excluded("other/"+p+"/f", false)
		assert.False(t, ok, "anchored: %s", p)
	}
}
