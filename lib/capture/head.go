package capture

import (
	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/repo"
)

// ReadHead returns HEAD's commit (nil when unborn) and branch ("" when
// detached) without capturing anything.
func ReadHead(r *repo.Repo) (*git.Oid, string, error) {
	var s Snapshot
	err := readHead(r, &s)
	return s.Head, s.Branch, err
}
