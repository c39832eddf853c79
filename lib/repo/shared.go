package repo

import (
	"context"
	"path/filepath"

	"github.com/git-venom/git-venom/lib/statefile"
)

// sharedRepository reads core.sharedRepository as git does (every scope,
// the repository's own config included, the last value winning): the
// state files and folders git-venom makes follow it as git's own do. It is
// read in process when the environment and the files allow, else by git.
func (r *Repo) sharedRepository() (statefile.Shared, error) {
	entries, err := r.ConfigLast(context.Background(), "core.sharedrepository")
	if err != nil {
		return statefile.SharedUmask, err
	}
	e, ok := entries["core.sharedrepository"]
	if !ok {
		return statefile.SharedUmask, nil
	}
	return statefile.ParseShared(e.Value, e.HasValue)
}

// ShareRef gives the loose ref name (refs/venom/...) that libgit2 just
// wrote, and the folders it made for it, the modes git gives its own under
// core.sharedRepository: libgit2 1.5 makes them with the umask's alone
// (0644 files, 0755 folders), which another member of the group could not
// update.
func (r *Repo) ShareRef(name string) error {
	return statefile.AdjustSharedBelow(filepath.Join(r.CommonDir, "refs"), filepath.Join(r.CommonDir, name))
}

// ShareObject is ShareRef for a loose object libgit2 just wrote: its
// folder objects/xx must stay writable to the group, or another member's
// git could not add an object there.
func (r *Repo) ShareObject(id string) error {
	if len(id) < 3 {
		return nil
	}
	objects := filepath.Join(r.CommonDir, "objects")
	return statefile.AdjustSharedBelow(objects, filepath.Join(objects, id[:2], id[2:]))
}
