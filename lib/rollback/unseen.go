package rollback

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/treeedit"
	"github.com/git-venom/git-venom/lib/treepath"
)

// A rollback can write files that no capture sees afterwards: the
// .gitignore it brings in covers them (or itself). Its undo's capture then
// lacks them, so the undo would leave them behind as ignored_in_the_way and
// report success. rollback.ended names them (unseen), and the undo's S
// holds again those still exactly as the rollback wrote them: they are its
// own writes, their content is in the undone rollback's target, and the
// undo's safety checkpoint holds them too (docs/rollback.md#undo).

// unseenOf lists the files p wrote that the capture after, tree after,
// does not hold.
func unseenOf(r *repo.Repo, p *plan.Plan, after *git.Oid) []string {
	lib, err := r.Lib()
	if err != nil {
		return nil
	}
	tree, err := lib.LookupTree(after)
	if err != nil {
		return nil
	}
	defer tree.Free()
	var out []string
	for _, c := range p.Files() {
		if !c.Writes() || c.TMode == plan.Gitlink {
			continue
		}
		if _, err := tree.EntryByPath(c.Path); err == nil {
			continue
		}
		out = append(out, c.Path)
	}
	return out
}

// withUnseen adds to an undo's S (snap) the files the rollback it undoes
// wrote and no capture could see (prev.Unseen), each only when it is on
// disk exactly as that rollback wrote it: the blob of the rollback's
// target at that path, with its mode. Anything else stays out of S, and the
// plan leaves it (ignored_in_the_way), as it says.
func withUnseen(ctx context.Context, s *state.Store, tree *repo.Repo, a *agents.Agent, snap *capture.Snapshot) error {
	prev := a.LastRollback
	if prev == nil || len(prev.Unseen) == 0 {
		return nil
	}
	owner := a
	if prev.Copy != "" {
		_, ca, err := share.ReadCopy(ctx, s, prev.Copy)
		if err != nil {
			return nil // the copy is gone: nothing shows what was written
		}
		owner = ca
	}
	target, err := checkpoints.Find(s.Repo, owner, prev.Checkpoint)
	if err != nil {
		return nil
	}
	lib, err := tree.Lib()
	if err != nil {
		return err
	}
	commitID, err := git.NewOid(target.Repos[0].Commit)
	if err != nil {
		return nil
	}
	commit, err := lib.LookupCommit(commitID)
	if err != nil {
		return nil
	}
	defer commit.Free()
	wrote, err := commit.Tree()
	if err != nil {
		return nil
	}
	defer wrote.Free()
	now, err := lib.LookupTree(snap.Tree)
	if err != nil {
		return err
	}
	defer now.Free()
	odb, err := lib.Odb()
	if err != nil {
		return err
	}
	defer odb.Free()
	var edits []treeedit.Edit
	for _, p := range prev.Unseen {
		if _, err := now.EntryByPath(p); err == nil {
			continue // captured: the plan sees it as it is
		}
		e, err := wrote.EntryByPath(p)
		if err != nil {
			continue
		}
		mode, id := uint32(e.Filemode), *e.Id
		if asWritten(odb, tree.Top, p, mode, &id) {
			edits = append(edits, treeedit.Edit{Path: p, Mode: mode, ID: id})
		}
	}
	if len(edits) == 0 {
		return nil
	}
	// As the rollback's expected tree: loose trees, each with git's mode
	// under core.sharedRepository; the blobs are the target's, stored.
	share := func(id *git.Oid) { _ = tree.ShareObject(id.String()) }
	id, err := treeedit.ApplyNoting(lib, lib, snap.Tree, edits, share)
	if err != nil {
		return err
	}
	snap.Tree = id
	return nil
}

// asWritten reports whether path p under top is a file (or link) with
// mode and content the blob id: what a rollback's write of it left. Its
// folders must be folders, never links, as the rollback's writes resolve
// them.
func asWritten(odb *git.Odb, top, p string, mode uint32, id *git.Oid) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		fi, err := os.Lstat(treepath.Abs(top, d))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	full := filepath.Join(top, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return false
	}
	var data []byte
	switch {
	case mode == 0o120000 && fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return false
		}
		data = []byte(target)
	case (mode == 0o100644 || mode == 0o100755) && fi.Mode().IsRegular():
		if (fi.Mode()&0o100 != 0) != (mode == 0o100755) {
			return false
		}
		if data, err = os.ReadFile(full); err != nil {
			return false
		}
	default:
		return false
	}
	got, err := odb.Hash(data, git.ObjectBlob)
	return err == nil && bytes.Equal(got[:], id[:])
}
