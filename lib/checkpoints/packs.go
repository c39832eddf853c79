package checkpoints

import (
	"path/filepath"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/packset"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
)

// writeCommit writes the checkpoint commit of snap in one pack with the
// capture's new objects (those TakeHeld held) and every object of its
// tree that neither this command's held packs nor anchors hold
// (capture.StoreCommit): no loose object a checkpoint, and none it relies
// on that a person's gc could drop before its ref. The pack is on disk,
// held, before the ref that names the commit is made.
func writeCommit(r *repo.Repo, snap *capture.Snapshot, msg string, when time.Time, anchors []*git.Oid) (*git.Oid, error) {
	if err := testhook.Point("commit-write"); err != nil {
		return nil, err
	}
	id, data := refs.CommitObject(snap.Tree, snap.Head, msg, when)
	if err := snap.StoreCommit(r, capture.Object{ID: *id, Type: packfile.Commit, Data: data}, anchors); err != nil {
		return nil, err
	}
	return id, nil
}

// maintainPacks merges git-venom's own packs when they pile up (packset),
// under the transaction's lock. A failure costs nothing but the merge: the
// packs stay as they are, and the next capture tries again.
func maintainPacks(tx *state.Txn) {
	defer testhook.Timed("pack-maintain", time.Now())
	// The capture's ref is made: its pack needs its hold no longer, and
	// this merge may take it.
	packset.Release()
	r := tx.Store.Repo
	// The command's own knob: in a test's process it is not the process's.
	opt := packset.Options{Threshold: testhook.IntIn(tx.Store.Environ, "VENOM_TEST_PACK_THRESHOLD")}
	_, _ = packset.Maintain(r.StateDir, filepath.Join(r.CommonDir, "objects", "pack"), opt)
}
