package capture

import (
	"context"
	"os"
	"sort"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treepath"
)

// finish completes a snapshot whose tree is written.
func finish(ctx context.Context, r *repo.Repo, snap *Snapshot, tree *git.Oid, sig string, gitlinks map[string]bool, userLinks map[string]string, modified map[string]bool) (*Snapshot, error) {
	snap.Tree = tree
	if err := readHead(r, snap); err != nil {
		return nil, store.Failed("head", err)
	}
	if err := listGitlinks(ctx, r, snap, gitlinks, userLinks, modified); err != nil {
		return nil, store.Failed("gitlinks", err)
	}
	sortSkipped(snap.Skipped)
	for i := range snap.Skipped {
		snap.Skipped[i] = snap.Skipped[i].Shown()
	}
	if snap.Skipped == nil {
		snap.Skipped = []journal.Skipped{}
	}
	if snap.Submodules == nil {
		snap.Submodules = []journal.Submodule{}
	}
	if sig != "" {
		snap.memo = private.Memo{Sig: sig, Tree: snap.Tree.String(), Skipped: snap.Skipped, Submodules: snap.Submodules}
	}
	return snap, nil
}

func readHead(r *repo.Repo, snap *Snapshot) error {
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	ref, err := lib.References.Lookup("HEAD")
	if err != nil {
		return err
	}
	defer ref.Free()
	if target := ref.SymbolicTarget(); target != "" {
		if branch, ok := strings.CutPrefix(target, "refs/heads/"); ok {
			snap.Branch = branch
		} else {
			snap.OffBranch = target
		}
		resolved, err := ref.Resolve()
		if err != nil {
			if git.IsErrorCode(err, git.ErrorCodeNotFound) || git.IsErrorCode(err, git.ErrorCodeUnbornBranch) {
				return nil // unborn: head null, HEAD stays unborn
			}
			return err
		}
		defer resolved.Free()
		snap.Head = resolved.Target()
		return nil
	}
	snap.Head = ref.Target()
	return nil
}

// listGitlinks fills submodules[] from the tree's gitlinks. dirty: the
// nested repository's HEAD differs from the user's index, or it has changes
// to tracked files (docs/checkpoints.md#what-a-capture-holds).
func listGitlinks(ctx context.Context, r *repo.Repo, snap *Snapshot, links map[string]bool, userLinks map[string]string, modified map[string]bool) error {
	if len(links) == 0 {
		return nil
	}
	odb, err := r.Odb()
	if err != nil {
		return err
	}
	defer odb.Free()
	// The snapshot's new trees are not on disk until Store.
	held := map[git.Oid][]byte{}
	for _, o := range snap.held {
		if o.Type == packfile.Tree {
			held[o.ID] = o.Data
		}
	}
	var names []string
	for p := range links {
		names = append(names, p)
	}
	sort.Strings(names)
	trees := store.NewTrees(odb, held)
	for _, p := range names {
		mode, id, found, err := trees.EntryAt(*snap.Tree, p)
		if err != nil {
			return err
		}
		if !found || mode != 0o160000 {
			continue
		}
		recorded, known := userLinks[p]
		d := modified[p] || (known && recorded != id.String())
		if !d {
			d = nestedHasChanges(r, p)
		}
		sm := journal.Submodule{Path: p, Commit: id.String(), Dirty: d}.Shown()
		snap.Submodules = append(snap.Submodules, sm)
	}
	return nil
}

// nestedHasChanges reports changes to tracked files inside a nested
// repository that status did not report (docs/checkpoints.md#what-a-capture-holds),
// read with libgit2, never git(1): the nested config and .gitattributes
// are anyone's to write, and git status there ran the filters they name.
// libgit2 runs no command a config names, and writes nothing.
func nestedHasChanges(r *repo.Repo, p string) bool {
	dir := treepath.Abs(r.Top, p)
	if !repo.Holds(dir) {
		return false
	}
	nested, err := git.OpenRepositoryExtended(dir, git.RepositoryOpenNoSearch, "")
	if err != nil {
		return false
	}
	defer nested.Free()
	list, err := nested.StatusList(&git.StatusOptions{Show: git.StatusShowIndexAndWorkdir,
		Flags: git.StatusOptExcludeSubmodules})
	if err != nil {
		return false
	}
	defer list.Free()
	n, err := list.EntryCount()
	return err == nil && n > 0
}

// skipWorktree is the skipped reason of the user's skip-worktree entries
// and sparse folders.
const skipWorktree = "skip_worktree"

// sortSkipped puts a skipped list in the order the log keeps: by the
// paths' bytes, whether path_b64 holds them yet or not.
func sortSkipped(l []journal.Skipped) {
	sort.Slice(l, func(i, j int) bool {
		return quote.RawPath(l[i].Path, l[i].PathB64) < quote.RawPath(l[j].Path, l[j].PathB64)
	})
}

func skippedEntry(top string, e gitindex.Entry) journal.Skipped {
	if e.SparseDir {
		return journal.Skipped{Path: strings.TrimSuffix(e.Path, "/") + "/", Bytes: 0, Reason: skipWorktree}
	}
	bytes := int64(e.Size)
	if fi, err := os.Lstat(treepath.Abs(top, e.Path)); err == nil && !fi.IsDir() {
		bytes = fi.Size()
	}
	return journal.Skipped{Path: e.Path, Bytes: bytes, Reason: skipWorktree}
}
