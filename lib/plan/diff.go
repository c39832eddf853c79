package plan

import (
	"context"
	"fmt"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/runpace"
	"github.com/git-venom/git-venom/lib/treewalk"
)

// Change is one path that differs between S and T, with both entries.
type Change struct {
	Path   string
	Change string  // create, modify or delete (T's view: what the rollback does)
	SMode  uint32  // 0 when S lacks the path
	TMode  uint32  // 0 when T lacks the path
	SOid   git.Oid // zero when S lacks the path
	TOid   git.Oid
	Class  string
	Left   string // the left reason, "" when the path is restored
	Detail *string
	// Rev is a revert's conflict (docs/rollback.md#revert), nil else.
	Rev *RevertInfo
}

// Gitlink is a submodule's or nested repository's mode.
const Gitlink = 0o160000

// Writes reports whether the rollback writes T's entry at the path.
func (c *Change) Writes() bool { return c.TMode != 0 }

// diffTrees lists the differences between trees (or commits) a and b,
// recursively, with no rename detection: what the docs/rollback.md#the-real-call recipe's `git
// diff-tree -r -z --no-renames` gives, with modes and object ids, worked out
// in process (a git process costs more than the few folders that differ).
// The list is in path order, as the walk emits it: classify and the
// rollback's merges rely on it.
func diffTrees(_ context.Context, r *repo.Repo, a, b string) ([]Change, error) {
	var list []Change
	err := withTrees(r, a, b, func(odb *git.Odb, ta, tb *git.Oid) error {
		// Counted first, then listed into a list of that length (the second walk
		// reads no folder again), the paths in one block of the counted length,
		// each change's path a slice of it: a plan deleting 300,000 files grew
		// and copied its list twice and held 300,000 strings for every
		// collection to mark.
		w := treewalk.NewWalker(odb)
		n, size, err := w.Count(ta, tb)
		if err != nil {
			return err
		}
		if n > largePlan {
			runpace.LargeHeap()
		}
		list = make([]Change, 0, n)
		var block strings.Builder
		block.Grow(size)
		ends := make([]int, 0, n)
		err = w.DiffBytes(ta, tb, func(path []byte, s, t treewalk.Side) {
			c := Change{SMode: s.Mode, SOid: s.ID, TMode: t.Mode, TOid: t.ID}
			switch {
			case c.SMode == 0:
				c.Change = "create"
			case c.TMode == 0:
				c.Change = "delete"
			default:
				c.Change = "modify"
			}
			list = append(list, c)
			block.Write(path)
			ends = append(ends, block.Len())
		})
		if err != nil {
			return err
		}
		paths, start := block.String(), 0
		for i, end := range ends {
			list[i].Path, start = paths[start:end], end
		}
		return nil
	})
	return list, err
}

// largePlan is the number of changes past which a rollback collects
// garbage at 1.5x its live heap instead of cli's 5x: the plan stays live
// to the end, through the deletions and the capture after them, and 5x
// of it (and of what the capture holds) filled cli's memory limit. A real
// call deleting 300,000 files: 248 MB resident, 196 MB at 1.5x, for about
// the same CPU.
const largePlan = 20000

// SameWithin reports whether trees (or commits) a and b agree on every
// path set matches: a path-scoped rollback's exact check (docs/rollback.md#the-real-call step 6),
// which the rest of the tree, not its to restore, does not decide.
func SameWithin(ctx context.Context, r *repo.Repo, a, b string, set pathspec.Set) (bool, error) {
	if a == b {
		return true, nil
	}
	changed, err := ChangedPaths(ctx, r, a, b)
	if err != nil {
		return false, err
	}
	for _, p := range changed {
		if set.Match(p) {
			return false, nil
		}
	}
	return true, nil
}

// ChangedPaths lists the paths that differ between trees (or commits) a
// and b of r, sorted: what changed between two captures.
func ChangedPaths(_ context.Context, r *repo.Repo, a, b string) ([]string, error) {
	var list []string
	err := eachChange(r, a, b, func(path string, _, _ treewalk.Side) { list = append(list, path) })
	return list, err
}

func eachChange(r *repo.Repo, a, b string, emit func(path string, s, t treewalk.Side)) error {
	return withTrees(r, a, b, func(odb *git.Odb, ta, tb *git.Oid) error {
		return treewalk.Diff(odb, ta, tb, emit)
	})
}

// withTrees runs walk with r's object database and the trees of a and b
// (trees or commits).
func withTrees(r *repo.Repo, a, b string, walk func(odb *git.Odb, ta, tb *git.Oid) error) error {
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
	odb, err := lib.Odb()
	if err != nil {
		return err
	}
	defer odb.Free()
	return walk(odb, ta.Id(), tb.Id())
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

// TreeID is the id of the tree of id, a tree or a commit of r.
func TreeID(r *repo.Repo, id string) (string, error) {
	lib, err := r.Lib()
	if err != nil {
		return "", err
	}
	t, err := lookupTree(lib, id)
	if err != nil {
		return "", err
	}
	defer t.Free()
	return t.Id().String(), nil
}
