package capture

import (
	"strings"

	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/treepath"
)

// sparseArea tells the paths outside a sparse checkout, which a capture
// leaves at the index's version (docs/checkpoints.md#what-a-capture-holds table; docs/checkpoints.md#what-a-capture-holds). git status
// still lists some of them: a skip-worktree file someone wrote anyway (git
// clears the bit in memory when the file is present) and untracked files in
// a folder outside the cone. docs/checkpoints.md#how-a-capture-runs's git add leaves both out.
type sparseArea struct {
	skipped map[string]bool // skip-worktree entries
	dirs    map[string]bool // sparse-index directory entries, without the slash
	// holders are the folders that directly hold a skip-worktree entry: in
	// cone mode such a folder is wholly outside the cone.
	holders map[string]bool
}

func newSparseArea(flagged []gitindex.Entry) *sparseArea {
	s := &sparseArea{skipped: map[string]bool{}, dirs: map[string]bool{}, holders: map[string]bool{}}
	for _, e := range flagged {
		switch {
		case e.SparseDir:
			s.dirs[strings.TrimSuffix(e.Path, "/")] = true
		case e.SkipWorktree:
			s.skipped[e.Path] = true
			s.holders[treepath.Parent(e.Path)] = true
		}
	}
	return s
}

// outside reports whether a path status listed lies outside the sparse
// checkout.
func (s *sparseArea) outside(p string, untracked bool) bool {
	if len(s.skipped)+len(s.dirs) == 0 {
		return false
	}
	if s.skipped[p] {
		return true
	}
	for d := treepath.Parent(p); ; d = treepath.Parent(d) {
		if s.dirs[d] || (untracked && d != "" && s.holders[d]) {
			return true
		}
		if d == "" {
			return false
		}
	}
}
