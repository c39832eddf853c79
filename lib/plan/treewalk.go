package plan

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/treepath"
)

// side is one tree entry of a path: its mode and object.
type side struct {
	mode uint32
	oid  string
}

// rawEntry is one entry of a tree object as stored.
type rawEntry struct {
	mode uint32
	id   string // binary object id
}

const modeTree = 0o040000

// walkDiff compares two trees (nil: empty) as `git diff-tree -r` does,
// descending only into subtrees whose ids differ, so a 100,000-file tree
// with a few changes costs a few folders. emit gets each path with its two
// sides (mode 0: the path is absent on that side). Trees are read as raw
// objects and parsed here: one call into libgit2 a folder, not one an entry.
func walkDiff(odb *git.Odb, a, b *git.Oid, prefix string, emit func(path string, s, t side)) error {
	ea, err := readTree(odb, a, prefix)
	if err != nil {
		return err
	}
	eb, err := readTree(odb, b, prefix)
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
				emit(path, x.side(), side{})
			}
			if inB && !yTree {
				emit(path, side{}, y.side())
			}
			if err := walkDiff(odb, ta, tb, path+"/", emit); err != nil {
				return err
			}
			continue
		}
		var s, t side
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

func (e rawEntry) side() side { return side{e.mode, hex.EncodeToString([]byte(e.id))} }

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
