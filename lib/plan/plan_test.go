package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestID(t *testing.T) {
	head := "8f3a1c9e5d7b2046a1c3e5f708192a3b4c5d6e7f"
	doc := `{"checkpoint":"k2","restore":"all","outside":null,"keep_head":false,"repos":[{"repo":".","tree":"6a1f0c2d3e4b5a69788f9e0d1c2b3a4f5e6d7c8b","head":"` + head + `"}]}`
	sum := sha256.Sum256([]byte(doc))
	assert.Equal(t, "p1-"+hex.EncodeToString(sum[:])[:16],
		ID(Options{Checkpoint: "k2", Restore: "all"}, "6a1f0c2d3e4b5a69788f9e0d1c2b3a4f5e6d7c8b", &head, nil))
	doc = `{"checkpoint":"k2","restore":"files","outside":"keep","keep_head":true,"repos":[{"repo":".","tree":"t","head":null}]}`
	sum = sha256.Sum256([]byte(doc))
	assert.Equal(t, "p1-"+hex.EncodeToString(sum[:])[:16],
		ID(Options{Checkpoint: "k2", Restore: "files", Outside: "keep", KeepHead: true}, "t", nil, nil))
	// A fetched copy's plan hashes the copy and its checkpoint's commit:
	// another copy, or the same after a fetch replaced the commit, is
	// another plan.
	doc = `{"checkpoint":"k2","restore":"files","outside":null,"keep_head":true,"repos":[{"repo":".","tree":"t","head":null}],"copy":{"id":"origin/m/a1","commit":"c1"}}`
	sum = sha256.Sum256([]byte(doc))
	o := Options{Checkpoint: "k2", Restore: "files", KeepHead: true}
	assert.Equal(t, "p1-"+hex.EncodeToString(sum[:])[:16], ID(o, "t", nil, &Copy{ID: "origin/m/a1", Commit: "c1"}))
	assert.NotEqual(t, ID(o, "t", nil, &Copy{ID: "origin/m/a1", Commit: "c1"}), ID(o, "t", nil, &Copy{ID: "origin/m/a1", Commit: "c2"}))
	assert.NotEqual(t, ID(o, "t", nil, &Copy{ID: "origin/m/a1", Commit: "c1"}), ID(o, "t", nil, &Copy{ID: "origin/n/a1", Commit: "c1"}))
}
