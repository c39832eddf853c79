package rollback

import (
	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/repo"
)

// safetyHeld checks, once the safety checkpoint's ref is made, that the
// object store holds the blob of every file of S the rollback replaces or
// deletes: the one copy left of a person's file once it is written over.
//
// Why it can be missing: a capture does not store again a blob it finds
// already stored, and the real call's capture of S finds the blobs the
// dry run stored, in a pack no ref reaches yet (its hold ends with the dry
// run). A person's `git repack -a -d` (or `gc --prune=now`) before the
// safety ref drops that pack. After the ref, git keeps the objects, so a
// blob present now stays. The lookup is in a fresh handle on the
// repository: the command's own handle keeps a dropped pack open and
// would still find it.
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
