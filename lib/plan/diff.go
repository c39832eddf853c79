package plan

import (
	"context"
	"fmt"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/repo"
)

// Change is one path that differs between S and T, with both entries.
type Change struct {
	Path   string
	Change string // create, modify or delete (T's view: what the rollback does)
	SMode  uint32 // 0 when S lacks the path
	SOid   string
	TMode  uint32 // 0 when T lacks the path
	TOid   string
	Class  string
	Left   string // the left reason, "" when the path is restored
	Detail *string
}

// Gitlink is a submodule's or nested repository's mode.
const Gitlink = 0o160000

// Writes reports whether the rollback writes T's entry at the path.
func (c *Change) Writes() bool { return c.TMode != 0 }

// diffTrees lists the differences between trees (or commits) a and b,
// recursively, with no rename detection: what the RFC 7.4 recipe's `git
// diff-tree -r -z --no-renames` gives, with modes and object ids. libgit2
// does it in process: in a loaded machine a git process costs more than
// the diff of two trees that share most of their subtrees.
func diffTrees(_ context.Context, r *repo.Repo, a, b string) ([]Change, error) {
	var list []Change
	err := eachDelta(r, a, b, func(d git.DiffDelta) {
		c := Change{Path: d.NewFile.Path, SMode: uint32(d.OldFile.Mode), TMode: uint32(d.NewFile.Mode)}
		if c.Path == "" {
			c.Path = d.OldFile.Path
		}
		if c.SMode != 0 {
			c.SOid = d.OldFile.Oid.String()
		}
		if c.TMode != 0 {
			c.TOid = d.NewFile.Oid.String()
		}
		switch {
		case c.SMode == 0:
			c.Change = "create"
		case c.TMode == 0:
			c.Change = "delete"
		default:
			c.Change = "modify"
		}
		list = append(list, c)
	})
	return list, err
}

// changedPaths lists the paths that differ between two trees (or commits).
func changedPaths(_ context.Context, r *repo.Repo, a, b string) (map[string]bool, error) {
	set := map[string]bool{}
	err := eachDelta(r, a, b, func(d git.DiffDelta) {
		set[d.OldFile.Path] = true
		set[d.NewFile.Path] = true
	})
	delete(set, "")
	return set, err
}

func eachDelta(r *repo.Repo, a, b string, fn func(git.DiffDelta)) error {
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	ta, err := lookupTree(lib, a)
	if err != nil {
		return err
	}
	defer ta.Free()
	tb, err := lookupTree(lib, b)
	if err != nil {
		return err
	}
	defer tb.Free()
	opts, err := git.DefaultDiffOptions()
	if err != nil {
		return err
	}
	// A file that becomes a symlink or a gitlink is one change, not two.
	opts.Flags |= git.DiffIncludeTypeChange
	d, err := lib.DiffTreeToTree(ta, tb, &opts)
	if err != nil {
		return err
	}
	defer d.Free()
	n, err := d.NumDeltas()
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		delta, err := d.Delta(i)
		if err != nil {
			return err
		}
		fn(delta)
	}
	return nil
}

// lookupTree finds the tree of a tree or commit id.
func lookupTree(lib *git.Repository, id string) (*git.Tree, error) {
	oid, err := git.NewOid(id)
	if err != nil {
		return nil, fmt.Errorf("%q is not an object id", id)
	}
	obj, err := lib.Lookup(oid)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	peeled, err := obj.Peel(git.ObjectTree)
	if err != nil {
		return nil, err
	}
	// The tree shares the peeled object; the caller frees it.
	return peeled.AsTree()
}
