package refs

import (
	"errors"
	"strings"

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
func UnsafePath(r *repo.Repo, tree *git.Oid, seen *Walk) error {
	if seen == nil {
		seen = &Walk{}
	}
	_, err := seen.Tree(r, tree)
	return err
}

// Tally is what a tree comes to once checked out: Paths its files, links
// and gitlinks at any depth, Depth the components of its deepest path,
// and, when the walk reads sizes, Bytes the size of all its files and
// Largest the largest one. A path is counted each time a folder names it:
// a tree that names one subtree twice checks it out twice (a "tree bomb"
// of twenty levels of two names is a million paths from 21 objects).
type Tally struct {
	Paths, Bytes, Largest int64
	Depth                 int
}

// ErrTooDeep: the walk went past its MaxDepth, and stopped there.
var ErrTooDeep = errors.New("the tree is deeper than the walk's limit")

// Walk checks trees as UnsafePath does and tallies them (Tally), reading
// each distinct tree once whatever the number of paths it stands for.
// The zero Walk checks names only; a Walk is not for concurrent use.
type Walk struct {
	// Sizes: read each blob's size (a header read per distinct blob).
	Sizes bool
	// MaxDepth, when not 0, stops the walk with ErrTooDeep at a path of
	// more components, before reading the trees below it.
	MaxDepth int
	done     map[git.Oid]Tally
	blobs    map[git.Oid]int64
	lib      *git.Repository
	odb      *git.Odb
	names    []string
}

// Tree checks and tallies the tree id of r.
func (w *Walk) Tree(r *repo.Repo, id *git.Oid) (Tally, error) {
	lib, err := r.Lib()
	if err != nil {
		return Tally{}, err
	}
	if w.done == nil {
		w.done, w.blobs = map[git.Oid]Tally{}, map[git.Oid]int64{}
	}
	w.lib, w.names = lib, w.names[:0]
	if w.Sizes && w.odb == nil {
		if w.odb, err = lib.Odb(); err != nil {
			return Tally{}, err
		}
	}
	return w.tree(id)
}

// Free lets go of the object database a sizing walk opened.
func (w *Walk) Free() {
	if w.odb != nil {
		w.odb.Free()
		w.odb = nil
	}
}

func (w *Walk) tree(id *git.Oid) (Tally, error) {
	if t, ok := w.done[*id]; ok {
		if w.MaxDepth > 0 && len(w.names)+t.Depth > w.MaxDepth {
			return Tally{}, ErrTooDeep
		}
		return t, nil
	}
	if w.MaxDepth > 0 && len(w.names) >= w.MaxDepth {
		return Tally{}, ErrTooDeep
	}
	t, err := w.lib.LookupTree(id)
	if err != nil {
		return Tally{}, err
	}
	defer t.Free()
	var sum Tally
	names := make(map[string]bool, t.EntryCount())
	for i := uint64(0); i < t.EntryCount(); i++ {
		e := t.EntryByIndex(i)
		if names[e.Name] {
			return Tally{}, w.unsafe(e.Name, treepath.RuleDuplicate)
		}
		names[e.Name] = true
		if err := treepath.VerifyName(e.Name, uint32(e.Filemode)); err != nil {
			var bad *treepath.Error
			if errors.As(err, &bad) {
				return Tally{}, w.unsafe(e.Name, bad.Rule)
			}
			return Tally{}, err
		}
		sub := Tally{Paths: 1, Depth: 1}
		switch e.Type {
		case git.ObjectTree:
			// The path is built only for an error: building every
			// prefix made a deep tree's walk quadratic in its depth.
			w.names = append(w.names, e.Name)
			sub, err = w.tree(e.Id)
			w.names = w.names[:len(w.names)-1]
			if err != nil {
				return Tally{}, err
			}
			sub.Depth++
		case git.ObjectBlob:
			if w.Sizes {
				if sub.Bytes, err = w.blobSize(e.Id); err != nil {
					return Tally{}, err
				}
				sub.Largest = sub.Bytes
			}
		}
		sum.Paths = addSat(sum.Paths, sub.Paths)
		sum.Bytes = addSat(sum.Bytes, sub.Bytes)
		sum.Largest = max(sum.Largest, sub.Largest)
		sum.Depth = max(sum.Depth, sub.Depth)
	}
	w.done[*id] = sum
	return sum, nil
}

func (w *Walk) blobSize(id *git.Oid) (int64, error) {
	if n, ok := w.blobs[*id]; ok {
		return n, nil
	}
	size, _, err := w.odb.ReadHeader(id)
	if err != nil {
		return 0, err
	}
	n := int64(size)
	if size > 1<<62 {
		n = 1 << 62
	}
	w.blobs[*id] = n
	return n, nil
}

// unsafe is the error of entry name in the folder the walk is in.
func (w *Walk) unsafe(name string, rule treepath.Rule) error {
	return &treepath.Error{Path: strings.Join(append(append([]string{}, w.names...), name), "/"), Rule: rule}
}

// addSat adds two counts, staying at the largest int64 rather than
// wrapping: a tree bomb of 64 levels stands for 2^64 paths.
func addSat(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
