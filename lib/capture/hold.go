package capture

import (
	"bytes"
	"errors"
	"slices"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treewalk"
)

// StoreCommit writes the snapshot's checkpoint commit, in the same held
// pack as every object of its tree that neither its own held packs nor an
// anchor (a commit a ref reaches, HEAD's) at the same path holds, so a gc
// or prune run before the ref exists deletes nothing it names; an object
// that can no longer be read fails the capture
// (docs/checkpoints.md#objects-a-command-relies-on).
func (s *Snapshot) StoreCommit(r *repo.Repo, commit Object, anchors []*git.Oid) error {
	return s.storeUnshared(r, []Object{commit}, anchors)
}

// Keep is StoreCommit without a commit, for a command that reads the
// snapshot's tree and makes no ref of it (a dry run, a diff with the
// current files) or reads it before its ref (a rollback's plan): every
// object of the tree that no anchor holds is in a pack this command holds
// until it ends, so a person's gc --prune=now cannot delete one under
// it. An object gone already fails it (Gone); a capture taken again
// then stores it anew.
func (s *Snapshot) Keep(r *repo.Repo, anchors []*git.Oid) error {
	return s.storeUnshared(r, nil, anchors)
}

// Gone says whether err is a capture's failure to read an object that
// is no longer in the repository: a person's gc deleted it before the
// command held it, and a capture taken again does not rely on it.
func Gone(err error) bool { return objectGone(err) }

// storeUnshared writes extra and the objects of the tree no anchor holds
// that this command's held packs do not hold yet, as one held pack.
func (s *Snapshot) storeUnshared(r *repo.Repo, extra []Object, anchors []*git.Oid) error {
	odb, err := r.Odb()
	if err != nil {
		return store.Failed("write-pack", err)
	}
	defer odb.Free()
	var anchorTrees []*git.Oid
	for _, c := range anchors {
		if c == nil {
			continue
		}
		// An anchor that cannot be read holds nothing for us.
		if info, err := refs.ReadCommit(r, c); err == nil {
			anchorTrees = append(anchorTrees, info.Tree)
		}
	}
	// The tree's objects this capture made: held ones not on disk yet, and
	// those found Stored (written below if the commit relies on them).
	trees := map[git.Oid][]byte{}
	for _, o := range s.held {
		if o.Type == packfile.Tree {
			trees[o.ID] = o.Data
		}
	}
	have := slices.Clone(s.stored)
	slices.SortFunc(have, compareOid)
	var again []git.Oid
	walk := func(anchorTrees []*git.Oid) error {
		again = again[:0]
		return treewalk.Unshared(odb, func(id *git.Oid) []byte { return trees[*id] }, s.Tree, anchorTrees, func(id git.Oid) {
			if _, mine := slices.BinarySearchFunc(have, id, compareOid); mine {
				return
			}
			if i, ok := slices.BinarySearchFunc(s.held, id, func(o Object, id git.Oid) int { return compareOid(o.ID, id) }); ok {
				s.held[i].Stored = false // in memory: written from there
				return
			}
			again = append(again, id)
		})
	}
	err = walk(anchorTrees)
	if err != nil && len(anchorTrees) > 0 && !objectGone(err) {
		// An anchor's tree git would not write (a checkpoint with a
		// duplicate entry, refused later by its own check) holds nothing
		// we can count on: hold all of ours.
		err = walk(nil)
	}
	if err != nil {
		err = store.Failed("write-pack", err)
	} else {
		trees, have = nil, nil
		err = s.store(r, extra, again)
		s.held = nil
	}
	if objectGone(err) {
		// The tree's stat caches named it (or git wrote it loose, and
		// they took its id): a capture taken again through them would
		// name it again, and fail the same way.
		private.Forget(r)
	}
	return err
}

// objectGone says whether err is libgit2's answer for an object that is
// not in the repository.
func objectGone(err error) bool {
	var g *git.GitError
	return errors.As(err, &g) && g.Code == git.ErrorCodeNotFound
}

func compareOid(a, b git.Oid) int { return bytes.Compare(a[:], b[:]) }

// store writes the held objects but those Stored, extra and again
// (objects read from the repository and written again) as one held pack,
// and notes their ids as this snapshot's own (stored). The Stored ones
// stay held, for StoreCommit.
func (s *Snapshot) store(r *repo.Repo, extra []Object, again []git.Oid) error {
	objs := append(s.held[:len(s.held):len(s.held)], extra...)
	if err := store.WritePack(r, objs, again...); err != nil {
		return store.Failed("write-pack", err)
	}
	kept := s.held[:0]
	for _, o := range objs {
		if o.Stored {
			kept = append(kept, o)
		} else {
			s.stored = append(s.stored, o.ID)
		}
	}
	s.stored = append(s.stored, again...)
	clear(s.held[len(kept):])
	s.held = kept
	return nil
}
