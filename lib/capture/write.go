package capture

import (
	"context"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treeedit"
)

// editTree is the tree edit (shortcut 4) for the sorted paths, when every
// one of them is a plain file, a link or a nested repository: it returns
// store.ErrNoTreePath otherwise. known are edits whose objects are known
// already (the carry's paths back to the base's version). spilled are the
// blobs it wrote to a held pack as it read them (store.Build).
func editTree(ctx context.Context, r *repo.Repo, base *git.Oid, s *sorted, known []treeedit.Edit) (tree *git.Oid, held []Object, spilled []git.Oid, err error) {
	if len(s.updates)+len(s.additions)+len(s.removes)+len(known) == 0 {
		return base, nil, nil, nil
	}
	files := make([]store.File, 0, len(s.updates)+len(s.additions))
	for i, p := range append(s.updates, s.additions...) {
		m := s.modes[p]
		if s.gitlinks[p] {
			m = 0o160000
		}
		if m == 0 {
			return nil, nil, nil, store.ErrNoTreePath
		}
		files = append(files, store.File{Path: p, Mode: m, Tracked: i < len(s.updates)})
	}
	return store.Build(ctx, r, base, files, s.removes, known)
}

// attributesFromIndex says whether git would read some .gitattributes from
// the index rather than the tree: it does when the tracked file is gone
// from the tree or is not a regular file there (skip-worktree, deleted,
// replaced by a link). hash-object reads no index, so the index way decides.
func attributesFromIndex(flagged []gitindex.Entry, updates, removes []string, modes map[string]uint32) bool {
	for _, e := range flagged {
		if e.SkipWorktree && isAttributes(e.Path) {
			return true
		}
	}
	for _, p := range removes {
		if isAttributes(p) {
			return true
		}
	}
	for _, p := range updates {
		if isAttributes(p) && modes[p]&0o170000 != 0o100000 {
			return true
		}
	}
	return false
}

// indexWay stores the sorted paths as the recipe does: git update-index
// stages them into the index (a scratch copy of the private index) and
// git write-tree writes its tree.
func indexWay(ctx context.Context, r *repo.Repo, b base, tmpDir string, s *sorted) (*git.Oid, error) {
	if len(s.updates)+len(s.additions) > 0 {
		if err := testhook.PointIn(ctx, "capture-object-write"); err != nil {
			return nil, store.Failed("update-index", err)
		}
	}
	target := b.idx
	var err error
	if b.persistent && len(s.updates)+len(s.removes)+len(s.additions) > 0 {
		// The private index's content stays the user's (its tree is the
		// base of the tree path): the capture's edits go into a scratch copy.
		if target, err = private.CopyIndex(b.idx, tmpDir); err != nil {
			return nil, store.Failed("copy_index", err)
		}
		defer statefile.Remove(target)
	}
	// Files first, removals after, as git add -A does in one pass: a
	// .gitattributes that is gone from the tree still applies to the files
	// from the index (git reads it there), so it must leave the index last.
	if staged := append(s.updates, s.additions...); len(staged) > 0 {
		if _, err := b.git(ctx, r, target, gitcli.NulList(staged), "update-index", "-z", "--add", "--replace", "--stdin"); err != nil {
			return nil, store.Failed("update-index", err)
		}
	}
	if len(s.removes) > 0 {
		if _, err := b.git(ctx, r, target, gitcli.NulList(s.removes), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return nil, store.Failed("update-index", err)
		}
	}
	if err := testhook.PointIn(ctx, "capture-write-tree"); err != nil {
		return nil, store.Failed("write-tree", err)
	}
	treeOut, err := b.git(ctx, r, target, nil, "write-tree")
	if err != nil {
		return nil, store.Failed("write-tree", err)
	}
	tree, err := git.NewOid(strings.TrimSpace(string(treeOut)))
	if err != nil {
		return nil, store.Failed("write-tree", err)
	}
	return tree, nil
}
