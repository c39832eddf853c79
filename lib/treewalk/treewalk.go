// Package treewalk compares two trees as `git diff-tree -r` does, reading
// each folder as one raw object parsed in Go and descending only into
// folders whose ids differ (and that the caller wants), so that a
// 100,000-file tree with a few changes costs a few folders.
package treewalk

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/treepath"
)

// Side is one tree entry of a path: its mode and object id; Mode 0 (and
// a zero ID) means the path is absent on that side. The id is kept raw: a
// 300,000-path plan holds no hex string a path.
type Side struct {
	Mode uint32
	ID   git.Oid
}

// rawEntry is one entry of a tree object as stored: name and id are
// slices of one copy of the object, so a folder costs one allocation,
// not one an entry.
type rawEntry struct {
	name string
	mode uint32
	id   string // binary object id
}

const modeTree = 0o040000

func (e *rawEntry) tree() bool { return e.mode == modeTree }

// Diff compares two trees (nil: empty) as `git diff-tree -r` does,
// descending only into subtrees whose ids differ. emit gets each path with
// its two sides, in path order (bytewise, as sort.Strings sorts them).
// Trees are read as raw objects and parsed here: one call into libgit2 a
// folder, not one an entry.
func Diff(odb *git.Odb, a, b *git.Oid, emit func(path string, s, t Side)) error {
	return (&Walker{odb: odb}).walk(a, b, nil, nil, asString(emit))
}

// asString is emit taking the path as a string of its own.
func asString(emit func(path string, s, t Side)) func(path []byte, s, t Side) {
	return func(path []byte, s, t Side) { emit(string(path), s, t) }
}

// Walker runs many diffs over one object store, parsing each folder once:
// a history of turns compares the same trees again and again.
type Walker struct {
	odb     *git.Odb
	trees   map[git.Oid][]rawEntry
	counted int // the paths Count's walk found
	bytes   int // and their length together
}

// NewWalker makes a Walker that keeps every tree it parses.
func NewWalker(odb *git.Odb) *Walker {
	return &Walker{odb: odb, trees: map[git.Oid][]rawEntry{}}
}

// DiffUnder is Diff looking only inside the folders descend accepts
// (given as "dir/sub/"); the paths right under an accepted folder are all
// emitted.
func (w *Walker) DiffUnder(a, b *git.Oid, descend func(dir string) bool, emit func(path string, s, t Side)) error {
	return w.walk(a, b, nil, descend, asString(emit))
}

// DiffBytes is Diff giving each path as bytes that are the walk's own
// and change after emit returns: a caller keeping 300,000 paths can keep
// them in one block rather than as 300,000 strings.
func (w *Walker) DiffBytes(a, b *git.Oid, emit func(path []byte, s, t Side)) error {
	return w.walk(a, b, nil, nil, emit)
}

// Count is the number of paths Diff would emit and their length
// together, found without making their paths: a caller that counts first
// can then list them into a list (and a block) of that length, the walker
// reading no folder again.
func (w *Walker) Count(a, b *git.Oid) (paths, bytes int, err error) {
	w.counted, w.bytes = 0, 0
	err = w.walk(a, b, nil, nil, nil)
	return w.counted, w.bytes, err
}

func (w *Walker) read(id *git.Oid, prefix []byte) ([]rawEntry, error) {
	if id == nil || w.trees == nil {
		return readTree(w.odb, id, prefix)
	}
	if l, ok := w.trees[*id]; ok {
		return l, nil
	}
	l, err := readTree(w.odb, id, prefix)
	if err == nil {
		w.trees[*id] = l
	}
	return l, err
}

// walk merges the two folders' entries in git's tree order, which is the
// paths' order, so what it emits comes sorted; a file and a folder of one
// name are two entries, the file first. A folder only one side has is one
// list read to its end. prefix is the folder's path and "/" ("" at the
// top), a buffer names are appended to; paths become strings on demand.
func (w *Walker) walk(a, b *git.Oid, prefix []byte, descend func(string) bool, emit func(path []byte, s, t Side)) error {
	ea, err := w.read(a, prefix)
	if err != nil {
		return err
	}
	eb, err := w.read(b, prefix)
	if err != nil {
		return err
	}
	for i, j := 0, 0; i < len(ea) || j < len(eb); {
		var x, y *rawEntry
		switch {
		case j == len(eb):
			x, i = &ea[i], i+1
		case i == len(ea):
			y, j = &eb[j], j+1
		default:
			switch c := compareEntries(&ea[i], &eb[j]); {
			case c < 0:
				x, i = &ea[i], i+1
			case c > 0:
				y, j = &eb[j], j+1
			default:
				x, y, i, j = &ea[i], &eb[j], i+1, j+1
				if x.mode == y.mode && x.id == y.id {
					continue
				}
			}
		}
		one := x
		if one == nil {
			one = y
		}
		if emit == nil && !one.tree() {
			w.counted++ // Count's walk
			w.bytes += len(prefix) + len(one.name)
			continue
		}
		path := append(prefix, one.name...)
		if one.tree() {
			var ta, tb *git.Oid
			if x != nil {
				ta = oidOf(x.id)
			}
			if y != nil {
				tb = oidOf(y.id)
			}
			path = append(path, '/')
			if descend != nil && !descend(string(path)) {
				continue
			}
			if err := w.walk(ta, tb, path, descend, emit); err != nil {
				return err
			}
			continue
		}
		var s, t Side
		if x != nil {
			s = x.side()
		}
		if y != nil {
			t = y.side()
		}
		emit(path, s, t)
	}
	return nil
}

func (e *rawEntry) side() Side {
	s := Side{Mode: e.mode}
	copy(s.ID[:], e.id)
	return s
}

func oidOf(raw string) *git.Oid {
	var o git.Oid
	copy(o[:], raw)
	return &o
}

// compareEntries orders two entries as git orders a tree's: by name, a
// folder's name read as ending in "/".
func compareEntries(a, b *rawEntry) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	ca, cb := nameEnd(a, n), nameEnd(b, n)
	return int(ca) - int(cb)
}

// nameEnd is the byte of e's name at i, or past its end the "/" a folder's
// name is read with (0 for anything else).
func nameEnd(e *rawEntry, i int) uint16 {
	switch {
	case i < len(e.name):
		return uint16(e.name[i]) + 1
	case i == len(e.name) && e.tree():
		return '/' + 1
	}
	return 0
}

// readTree parses a tree object, entries "<octal mode> <name>\0<binary id>";
// a nil id is the empty tree. Two things only a hand-made tree holds are a
// *treepath.Error naming prefix+name: a name found twice (fsck's
// duplicateEntries: a diff would see one of the two) and a mode git never
// writes (fsck's badFilemode: a mode of 0 reads as absent, and a rollback
// would delete the path). Entries out of git's order (fsck's
// treeNotSorted) are sorted here, as the walk needs them.
func readTree(odb *git.Odb, id *git.Oid, prefix []byte) ([]rawEntry, error) {
	if id == nil {
		return nil, nil
	}
	obj, err := odb.Read(id)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	if obj.Type() != git.ObjectTree {
		return nil, fmt.Errorf("%s is not a tree", id)
	}
	// One copy: data is libgit2's memory, freed on return.
	return parseTree(id, string(obj.Data()), prefix)
}

// parseTree parses the tree object id whose content is data (readTree).
func parseTree(id *git.Oid, data string, prefix []byte) ([]rawEntry, error) {
	const idLen = len(git.Oid{})
	list := make([]rawEntry, 0, len(data)/(idLen+10))
	for len(data) > 0 {
		sp := strings.IndexByte(data, ' ')
		nul := strings.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		mode, err := strconv.ParseUint(data[:sp], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		name := data[sp+1 : nul]
		if !treepath.ValidMode(uint32(mode)) {
			return nil, &treepath.Error{Path: string(prefix) + name, Rule: treepath.RuleMode}
		}
		list = append(list, rawEntry{name, uint32(mode), data[nul+1 : nul+1+idLen]})
		data = data[nul+1+idLen:]
	}
	sorted := true
	for i := 1; i < len(list) && sorted; i++ {
		sorted = compareEntries(&list[i-1], &list[i]) < 0
	}
	if !sorted {
		sort.SliceStable(list, func(i, j int) bool { return compareEntries(&list[i], &list[j]) < 0 })
	}
	// The same name twice: side by side in the order, or a file and a
	// folder, the file first and names that extend it between them.
	for i := range list {
		if i > 0 && list[i-1].name == list[i].name {
			return nil, &treepath.Error{Path: string(prefix) + list[i].name, Rule: treepath.RuleDuplicate}
		}
		if !list[i].tree() {
			continue
		}
		file := rawEntry{name: list[i].name}
		k := sort.Search(i, func(k int) bool { return compareEntries(&list[k], &file) >= 0 })
		if k < i && list[k].name == file.name {
			return nil, &treepath.Error{Path: string(prefix) + file.name, Rule: treepath.RuleDuplicate}
		}
	}
	return list, nil
}
