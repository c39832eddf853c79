package store

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	git "github.com/libgit2/git2go/v34"
)

// entryAt finds the mode and id of the entry at path p of tree. A
// capture's new trees are held in memory until Snapshot.Store packs them
// with the checkpoint's commit, so each tree is read from held first, then
// from the repository.
func EntryAt(odb *git.Odb, held map[git.Oid][]byte, tree git.Oid, p string) (uint32, git.Oid, bool, error) {
	id := tree
	comps := strings.Split(p, "/")
	for i, name := range comps {
		data, err := treeData(odb, held, id)
		if err != nil {
			return 0, git.Oid{}, false, err
		}
		mode, next, found, err := findEntry(data, name)
		if err != nil || !found {
			return 0, git.Oid{}, false, err
		}
		if i == len(comps)-1 {
			return mode, next, true, nil
		}
		if mode != 0o040000 {
			return 0, git.Oid{}, false, nil
		}
		id = next
	}
	return 0, git.Oid{}, false, nil
}

func treeData(odb *git.Odb, held map[git.Oid][]byte, id git.Oid) ([]byte, error) {
	if data, ok := held[id]; ok {
		return data, nil
	}
	obj, err := odb.Read(&id)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	if obj.Type() != git.ObjectTree {
		return nil, fmt.Errorf("%s is not a tree", id.String())
	}
	return append([]byte(nil), obj.Data()...), nil
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
