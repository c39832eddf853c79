package treewalk

import (
	"sort"

	git "github.com/libgit2/git2go/v34"
)

// Unshared calls need once with the id of every object tree names, itself
// included, that no anchor holds at the same path: what a commit of tree
// relies on beyond its anchors (docs/checkpoints.md#objects-a-command-relies-on).
// A gitlink is skipped and a folder an anchor holds whole is not read.
// held gives a tree not on disk yet (nil: none); the rest come from odb.
func Unshared(odb *git.Odb, held func(id *git.Oid) []byte, tree *git.Oid, anchors []*git.Oid, need func(id git.Oid)) error {
	u := &unshared{odb: odb, held: held, need: need, seen: map[git.Oid]bool{}}
	return u.walk(tree, anchors)
}

type unshared struct {
	odb  *git.Odb
	held func(id *git.Oid) []byte
	need func(id git.Oid)
	// seen are the trees walked (and the blobs given to need): a subtree
	// found at two paths is walked once, so a tree of repeated folders
	// costs its distinct folders only.
	seen map[git.Oid]bool
}

func (u *unshared) read(id *git.Oid) ([]rawEntry, error) {
	if u.held != nil {
		if data := u.held(id); data != nil {
			return parseTree(id, string(data), nil)
		}
	}
	return readTree(u.odb, id, nil)
}

// walk gives need tree and whatever under it anchors (the trees at the
// same path in each anchor) do not hold. Walked once, it needed then
// everything no anchor of that path held: reachable either way.
func (u *unshared) walk(tree *git.Oid, anchors []*git.Oid) error {
	for _, a := range anchors {
		if a.Equal(tree) {
			return nil
		}
	}
	if u.seen[*tree] {
		return nil
	}
	u.seen[*tree] = true
	u.need(*tree)
	ents, err := u.read(tree)
	if err != nil {
		return err
	}
	lists := make([][]rawEntry, 0, len(anchors))
	for _, a := range anchors {
		l, err := readTree(u.odb, a, nil)
		if err != nil {
			return err
		}
		lists = append(lists, l)
	}
	var sub []*git.Oid
	for i := range ents {
		e := &ents[i]
		if e.mode == 0o160000 {
			continue
		}
		held := false
		sub = sub[:0]
		for _, l := range lists {
			k := sort.Search(len(l), func(k int) bool { return compareEntries(&l[k], e) >= 0 })
			if k == len(l) || l[k].name != e.name || l[k].tree() != e.tree() {
				continue
			}
			if l[k].id == e.id {
				held = true
				break
			}
			if e.tree() {
				sub = append(sub, oidOf(l[k].id))
			}
		}
		if held {
			continue
		}
		id := oidOf(e.id)
		if e.tree() {
			if err := u.walk(id, append([]*git.Oid(nil), sub...)); err != nil {
				return err
			}
			continue
		}
		if !u.seen[*id] {
			u.seen[*id] = true
			u.need(*id)
		}
	}
	return nil
}
