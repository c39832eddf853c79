package store

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	git "github.com/libgit2/git2go/v34"
)

// Trees finds entries by path in trees of one repository, reading each
// tree object once: a capture's new trees are held in memory until
// Snapshot.Store packs them with the checkpoint's commit, so each tree is
// read from held first, then from the repository, and kept (a carry that
// reverts 300,000 paths read the same root tree 300,000 times).
type Trees struct {
	odb  *git.Odb
	held map[git.Oid][]byte
	read map[git.Oid][]byte
}

// NewTrees reads from held (may be nil), then from odb.
func NewTrees(odb *git.Odb, held map[git.Oid][]byte) *Trees {
	return &Trees{odb: odb, held: held, read: map[git.Oid][]byte{}}
}

// EntryAt finds the mode and id of the entry at path p of tree.
func (t *Trees) EntryAt(tree git.Oid, p string) (uint32, git.Oid, bool, error) {
	// Name by name, without splitting p: a carry looks up every path it
	// reverts, 300,000 after a rollback deleted that many files.
	id := tree
	for rest := p; ; {
		name, after, more := strings.Cut(rest, "/")
		data, err := t.data(id)
		if err != nil {
			return 0, git.Oid{}, false, err
		}
		mode, next, found, err := findEntry(data, name)
		if err != nil || !found {
			return 0, git.Oid{}, false, err
		}
		if !more {
			return mode, next, true, nil
		}
		if mode != 0o040000 {
			return 0, git.Oid{}, false, nil
		}
		id, rest = next, after
	}
}

func (t *Trees) data(id git.Oid) ([]byte, error) {
	if data, ok := t.held[id]; ok {
		return data, nil
	}
	if data, ok := t.read[id]; ok {
		return data, nil
	}
	obj, err := t.odb.Read(&id)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	if obj.Type() != git.ObjectTree {
		return nil, fmt.Errorf("%s is not a tree", id.String())
	}
	data := append([]byte(nil), obj.Data()...)
	t.read[id] = data
	return data, nil
}

// findEntry reads a raw tree ("<octal mode> <name>\0<binary id>" an entry)
// for the entry called name.
func findEntry(data []byte, name string) (uint32, git.Oid, bool, error) {
	const idLen = len(git.Oid{})
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return 0, git.Oid{}, false, fmt.Errorf("a tree is damaged")
		}
		if string(data[sp+1:nul]) == name {
			mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
			if err != nil {
				return 0, git.Oid{}, false, fmt.Errorf("a tree is damaged")
			}
			var id git.Oid
			copy(id[:], data[nul+1:nul+1+idLen])
			return uint32(mode), id, true, nil
		}
		data = data[nul+1+idLen:]
	}
	return 0, git.Oid{}, false, nil
}
