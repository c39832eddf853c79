package plan

import (
	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/repo"
)

// canonicalPaths writes set as pathspec.Canonical does, a file being what
// any of trees (S's tree, T's commit: all the plan compares) holds at a
// path as anything but a folder. Two sets that choose the same paths of
// those trees then give the same plan id, and sets that do not, different
// ones.
func canonicalPaths(r *repo.Repo, set pathspec.Set, trees ...string) (pathspec.Set, error) {
	if set.Empty() {
		return set, nil
	}
	lib, err := r.Lib()
	if err != nil {
		return set, err
	}
	var open []*git.Tree
	defer func() {
		for _, t := range open {
			t.Free()
		}
	}()
	for _, id := range trees {
		t, err := lookupTree(lib, id)
		if err != nil {
			return set, err
		}
		open = append(open, t)
	}
	return set.Canonical(func(path string) bool {
		for _, t := range open {
			if e, err := t.EntryByPath(path); err == nil && e.Type != git.ObjectTree {
				return true
			}
		}
		return false
	}), nil
}
