// Package treewalk compares two trees as `git diff-tree -r` does, reading
// each folder as one raw object parsed in Go and descending only into
// folders whose ids differ (and that the caller wants), so that a
// 100,000-file tree with a few changes costs a few folders.
package treewalk

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/treepath"
)

// Side is one tree entry of a path: its mode and object id (hex); Mode 0
// means the path is absent on that side.
type Side struct {
	Mode uint32
	Oid  string
}

// rawEntry is one entry of a tree object as stored.
type rawEntry struct {
	mode uint32
	id   string // binary object id
}

const modeTree = 0o040000

// Diff compares two trees (nil: empty) as `git diff-tree -r` does,
// descending only into subtrees whose ids differ. emit gets each path with
// its two sides. Trees are read as raw objects and parsed here: one call
// into libgit2 a folder, not one an entry.
func Diff(odb *git.Odb, a, b *git.Oid, emit func(path string, s, t Side)) error {
	return (&Walker{odb: odb}).walk(a, b, "", nil, emit)
}

// Walker runs many diffs over one object store, parsing each folder once:
// a history of turns compares the same trees again and again.
type Walker struct {
	odb   *git.Odb
	trees map[git.Oid]map[string]rawEntry
}

// NewWalker makes a Walker that keeps every tree it parses.
func NewWalker(odb *git.Odb) *Walker {
	return &Walker{odb: odb, trees: map[git.Oid]map[string]rawEntry{}}
}

// DiffUnder is Diff looking only inside the folders descend accepts
// (given as "dir/sub/"); the paths right under an accepted folder are all
// emitted.
func (w *Walker) DiffUnder(a, b *git.Oid, descend func(dir string) bool, emit func(path string, s, t Side)) error {
	return w.walk(a, b, "", descend, emit)
}

func (w *Walker) read(id *git.Oid, prefix string) (map[string]rawEntry, error) {
	if id == nil || w.trees == nil {
		return readTree(w.odb, id, prefix)
	}
	if m, ok := w.trees[*id]; ok {
		return m, nil
	}
	m, err := readTree(w.odb, id, prefix)
	if err == nil {
		w.trees[*id] = m
	}
	return m, err
}

func (w *Walker) walk(a, b *git.Oid, prefix string, descend func(string) bool, emit func(path string, s, t Side)) error {
	ea, err := w.read(a, prefix)
	if err != nil {
		return err
	}
	eb, err := w.read(b, prefix)
	if err != nil {
		return err
	}
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
		if inA && inB && x == y {
			continue
		}
		path := prefix + n
		xTree := inA && x.mode == modeTree
		yTree := inB && y.mode == modeTree
		if xTree || yTree {
			var ta, tb *git.Oid
			if xTree {
				ta = oidOf(x.id)
			}
			if yTree {
				tb = oidOf(y.id)
			}
			// A file on one side and a folder on the other: the file is a
			// change of its own, beside everything in the folder.
			if inA && !xTree {
				emit(path, x.side(), Side{})
			}
			if inB && !yTree {
				emit(path, Side{}, y.side())
			}
			if descend != nil && !descend(path+"/") {
				continue
			}
			if err := w.walk(ta, tb, path+"/", descend, emit); err != nil {
				return err
			}
			continue
		}
		var s, t Side
		if inA {
			s = x.side()
		}
		if inB {
			t = y.side()
		}
		emit(path, s, t)
	}
	return nil
}

func (e rawEntry) side() Side { return Side{e.mode, hex.EncodeToString([]byte(e.id))} }

func oidOf(raw string) *git.Oid {
	var o git.Oid
	copy(o[:], raw)
	return &o
}

// readTree parses a tree object: "<octal mode> <name>\0<binary id>" a
// entry. A nil id is the empty tree. A name found twice (git's fsck calls
// it duplicateEntries; only a hand-made tree has one) is a
// *treepath.Error naming prefix+name: one map entry would hide the other.
// So is a mode git never writes (fsck's badFilemode): a mode of 0 would
// read as absent on both sides, and a rollback would delete the path.
func readTree(odb *git.Odb, id *git.Oid, prefix string) (map[string]rawEntry, error) {
	m := map[string]rawEntry{}
	if id == nil {
		return m, nil
	}
	obj, err := odb.Read(id)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	if obj.Type() != git.ObjectTree {
		return nil, fmt.Errorf("%s is not a tree", id)
	}
	data := obj.Data()
	const idLen = len(git.Oid{})
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		// Strings are copied out: data is libgit2's memory, freed on return.
		name := string(data[sp+1 : nul])
		if _, dup := m[name]; dup {
			return nil, &treepath.Error{Path: prefix + name, Rule: treepath.RuleDuplicate}
		}
		if !treepath.ValidMode(uint32(mode)) {
			return nil, &treepath.Error{Path: prefix + name, Rule: treepath.RuleMode}
		}
		m[name] = rawEntry{uint32(mode), string(data[nul+1 : nul+1+idLen])}
		data = data[nul+1+idLen:]
	}
	return m, nil
}
