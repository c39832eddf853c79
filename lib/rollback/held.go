package rollback

import (
	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/repo"
)

// holdS makes S's objects the command's own until it ends
// (capture.Snapshot.Keep): the capture may have found them stored where
// nothing keeps them (an earlier dry run's pack, the memo's trees), and a
// person's git gc --prune=now would delete them before the plan, the
// safety checkpoint or the undo read them. An object gone before it was
// held means a capture taken again (retake), which stores it anew.
func holdS(c *checked, snap *capture.Snapshot, retake func() (*capture.Snapshot, error)) (*capture.Snapshot, error) {
	for try := 1; ; try++ {
		err := snap.Keep(c.tree, sAnchors(c, snap))
		if err == nil {
			return snap, nil
		}
		if !capture.Gone(err) || try == 3 {
			return nil, err
		}
		if snap, err = retake(); err != nil {
			return nil, err
		}
	}
}

// sAnchors are the commits whose trees a ref keeps and S shares most
// with: HEAD's, the target's and the agent's latest checkpoint's.
func sAnchors(c *checked, snap *capture.Snapshot) []*git.Oid {
	list := []*git.Oid{snap.Head}
	for _, k := range []*agents.Checkpoint{c.target, c.agent.Latest()} {
		if k == nil || len(k.Repos) != 1 || (k != c.target && !checkpoints.Usable(c.tree, c.agent, k)) {
			continue
		}
		if id, err := git.NewOid(k.Repos[0].Commit); err == nil {
			list = append(list, id)
		}
	}
	return list
}

// safetyHeld checks, once the safety checkpoint's ref is made, that the
// store holds the blob of every file of S the rollback replaces or
// deletes. The safety checkpoint's pack holds them already
// (docs/checkpoints.md#objects-a-command-relies-on): this is the last
// guard, looked up in a fresh handle, as the command's own keeps a
// dropped pack open.
func safetyHeld(r *repo.Repo, changes []plan.Change) error {
	lib, err := git.OpenRepositoryExtended(r.GitDir, git.RepositoryOpenNoSearch, "")
	if err != nil {
		return errcode.From(err, errcode.FailedCheckpointGit)
	}
	defer lib.Free()
	odb, err := lib.Odb()
	if err != nil {
		return errcode.From(err, errcode.FailedCheckpointGit)
	}
	defer odb.Free()
	missing := 0
	var first string
	for i := range changes {
		c := &changes[i]
		if c.Left != "" || c.SMode == 0 || c.SMode == plan.Gitlink || c.SOid.IsZero() {
			continue
		}
		if !odb.Exists(&c.SOid) {
			if missing == 0 {
				first = c.Path
			}
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	return errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "safety_objects_missing"},
		"the safety checkpoint lacks the content of %d file(s) (%s first): the objects went missing before its ref was made (a repack?); nothing was written",
		missing, first).Hint("%s", "run the dry run again; "+first+" and the rest are as they were")
}
