package refs

import (
	"errors"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treepath"
)

// UnsafePath returns the first entry of a tree, at any depth, whose name
// git would refuse to check out, or that repeats a name in its folder, as a
// *treepath.Error naming its full path;
// nil when every entry passes; another error when a tree cannot be read. A
// capture never makes such a tree: one found under refs/venom was made by
// hand. seen holds trees already found safe, so that checkpoints sharing
// folders read each once; it may be nil.
func UnsafePath(r *repo.Repo, tree *git.Oid, seen map[git.Oid]bool) error {
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	if seen == nil {
		seen = map[git.Oid]bool{}
	}
	return unsafeIn(lib, tree, "", seen)
}

func unsafeIn(lib *git.Repository, id *git.Oid, prefix string, seen map[git.Oid]bool) error {
	if seen[*id] {
		return nil
	}
	t, err := lib.LookupTree(id)
	if err != nil {
		return err
	}
	defer t.Free()
	names := map[string]bool{}
	for i := uint64(0); i < t.EntryCount(); i++ {
		e := t.EntryByIndex(i)
		if names[e.Name] {
			return &treepath.Error{Path: prefix + e.Name, Rule: treepath.RuleDuplicate}
		}
		names[e.Name] = true
		if err := treepath.VerifyName(e.Name, uint32(e.Filemode)); err != nil {
			var bad *treepath.Error
			if errors.As(err, &bad) {
				return &treepath.Error{Path: prefix + e.Name, Rule: bad.Rule}
			}
			return err
		}
		if e.Type == git.ObjectTree {
			if err := unsafeIn(lib, e.Id, prefix+e.Name+"/", seen); err != nil {
				return err
			}
		}
	}
	seen[*id] = true
	return nil
}
