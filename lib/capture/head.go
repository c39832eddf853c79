package capture

import (
	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/repo"
)

// ReadHead returns HEAD's commit (nil when unborn), its branch ("" when
// on none) and, when HEAD is attached to a ref outside refs/heads, that
// ref (Snapshot.OffBranch), without capturing anything.
func ReadHead(r *repo.Repo) (head *git.Oid, branch, offBranch string, err error) {
	var s Snapshot
	err = readHead(r, &s)
	return s.Head, s.Branch, s.OffBranch, err
}
