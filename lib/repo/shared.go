package repo

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/statefile"
)

// sharedRepository reads core.sharedRepository as git does (every scope,
// the repository's own config included, the last value winning): the
// state files and folders git-venom makes follow it as git's own do. It is
// read in process when the environment and the files allow, else by git.
func (r *Repo) sharedRepository() (statefile.Shared, error) {
	if files, ok := config.ScopeFiles(r.environ); ok {
		files = append(files, filepath.Join(r.CommonDir, "config"))
		worktreeConfig := false
		entries, ok := config.Entries(files, func(name string) bool {
			worktreeConfig = worktreeConfig || strings.HasPrefix(name, "extensions.")
			return name == "core.sharedrepository"
		})
		// extensions.worktreeConfig adds a file per worktree: git's to read.
		if ok && !worktreeConfig {
			if len(entries) == 0 {
				return statefile.SharedUmask, nil
			}
			last := entries[len(entries)-1]
			return statefile.ParseShared(last.Value, last.HasValue)
		}
	}
	out, err := r.Git.Run(context.Background(), "config", "--get", "core.sharedRepository")
	if gitcli.ExitCode(err) == 1 {
		return statefile.SharedUmask, nil
	}
	if err != nil {
		return statefile.SharedUmask, err
	}
	return statefile.ParseShared(strings.TrimRight(string(out), "\n"), true)
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
