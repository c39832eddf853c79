package rollback

import (
	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/repo"
)

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
