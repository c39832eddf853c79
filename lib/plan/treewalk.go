package plan

import (
	"sort"

	git "github.com/libgit2/git2go/v34"
)

// side is one tree entry of a path: its mode and object.
type side struct {
	mode uint32
	oid  string
}

// walkDiff compares two trees as `git diff-tree -r` does, descending only
// into subtrees whose ids differ, so a 100,000-file tree with a few changes
// costs a few folders. emit gets each path with its two sides (mode 0: the
// path is absent on that side).
func walkDiff(lib *git.Repository, a, b *git.Tree, prefix string, emit func(path string, s, t side)) error {
	ea, eb := entries(a), entries(b)
	names := make([]string, 0, len(ea)+len(eb))
	for n := range ea {
		names = append(names, n)
	}
	for n := range eb {
		if _, ok := ea[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		x, inA := ea[n]
		y, inB := eb[n]
		if inA && inB && x.Filemode == y.Filemode && x.Id.Equal(y.Id) {
			continue
		}
		path := prefix + n
		xTree := inA && x.Filemode == git.FilemodeTree
		yTree := inB && y.Filemode == git.FilemodeTree
		if xTree || yTree {
			var ta, tb *git.Tree
			var err error
			if xTree {
				if ta, err = lib.LookupTree(x.Id); err != nil {
					return err
				}
			}
			if yTree {
				if tb, err = lib.LookupTree(y.Id); err != nil {
					if ta != nil {
						ta.Free()
					}
					return err
				}
			}
			// A file on one side and a folder on the other: the file is a
			// change of its own, beside everything in the folder.
			if inA && !xTree {
				emit(path, side{uint32(x.Filemode), x.Id.String()}, side{})
			}
			if inB && !yTree {
				emit(path, side{}, side{uint32(y.Filemode), y.Id.String()})
			}
			err = walkDiff(lib, ta, tb, path+"/", emit)
			if ta != nil {
				ta.Free()
			}
			if tb != nil {
				tb.Free()
			}
			if err != nil {
				return err
			}
			continue
		}
		var s, t side
		if inA {
			s = side{uint32(x.Filemode), x.Id.String()}
		}
		if inB {
			t = side{uint32(y.Filemode), y.Id.String()}
		}
		emit(path, s, t)
	}
	return nil
}

func entries(t *git.Tree) map[string]*git.TreeEntry {
	m := map[string]*git.TreeEntry{}
	if t == nil {
		return m
	}
	n := t.EntryCount()
	for i := uint64(0); i < n; i++ {
		e := t.EntryByIndex(i)
		m[e.Name] = e
	}
	return m
}
