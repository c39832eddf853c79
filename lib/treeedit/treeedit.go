// Package treeedit builds a tree from a base tree and a list of path edits,
// rebuilding only the folders on the edited paths.
package treeedit

import (
	"strings"

	git "github.com/libgit2/git2go/v34"
)

// Edit sets one path of a tree.
type Edit struct {
	Path string
	Mode uint32 // 0: the path is removed
	Oid  string
}

// Apply returns base (nil: the empty tree) with each path set to its edit,
// or removed when the edit's mode is 0. Only the folders on the edited paths
// are rebuilt, in process: a 100,000-file tree costs what its edits cost,
// not a read-tree of it. Trees are written to repo's object database.
func Apply(repo *git.Repository, base *git.Oid, edits []Edit) (*git.Oid, error) {
	return ApplyNoting(repo, repo, base, edits, func(*git.Oid) {})
}

// ApplyNoting is Apply reading the base trees from read and writing the
// new ones to write, telling written the id of every tree it writes.
func ApplyNoting(read, write *git.Repository, base *git.Oid, edits []Edit, written func(*git.Oid)) (*git.Oid, error) {
	m := map[string]Edit{}
	for _, e := range edits {
		m[e.Path] = e
	}
	id, _, err := editLevel(repos{read, write}, base, m, written)
	return id, err
}

type repos struct{ read, write *git.Repository }

// editLevel rebuilds one folder; it reports whether the folder came out empty.
func editLevel(repo repos, id *git.Oid, edits map[string]Edit, written func(*git.Oid)) (*git.Oid, bool, error) {
	var tree *git.Tree
	var tb *git.TreeBuilder
	var err error
	if id != nil {
		if tree, err = repo.read.LookupTree(id); err != nil {
			return nil, false, err
		}
		defer tree.Free()
		tb, err = repo.write.TreeBuilderFromTree(tree)
	} else {
		tb, err = repo.write.TreeBuilder()
	}
	if err != nil {
		return nil, false, err
	}
	defer tb.Free()
	names := map[string]bool{}
	if tree != nil {
		for i := uint64(0); i < tree.EntryCount(); i++ {
			names[tree.EntryByIndex(i).Name] = true
		}
	}
	direct := map[string]Edit{}
	sub := map[string]map[string]Edit{}
	for p, e := range edits {
		if dir, rest, ok := strings.Cut(p, "/"); ok {
			if sub[dir] == nil {
				sub[dir] = map[string]Edit{}
			}
			sub[dir][rest] = e
		} else {
			direct[p] = e
		}
	}
	for name, e := range direct {
		if e.Mode == 0 && names[name] {
			_ = tb.Remove(name)
			delete(names, name)
		}
	}
	for dir, es := range sub {
		var child *git.Oid
		if tree != nil {
			if te := tree.EntryByName(dir); te != nil && te.Filemode == git.FilemodeTree {
				child = te.Id
			}
		}
		if names[dir] {
			_ = tb.Remove(dir)
			delete(names, dir)
		}
		newID, empty, err := editLevel(repo, child, es, written)
		if err != nil {
			return nil, false, err
		}
		if !empty {
			if err := tb.Insert(dir, newID, git.FilemodeTree); err != nil {
				return nil, false, err
			}
			names[dir] = true
		}
	}
	for name, e := range direct {
		if e.Mode == 0 {
			continue
		}
		oid, err := git.NewOid(e.Oid)
		if err != nil {
			return nil, false, err
		}
		if err := tb.Insert(name, oid, git.Filemode(e.Mode)); err != nil {
			return nil, false, err
		}
		names[name] = true
	}
	out, err := tb.Write()
	if err != nil {
		return nil, false, err
	}
	written(out)
	return out, len(names) == 0, nil
}
