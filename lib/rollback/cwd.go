package rollback

import (
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/plan"
)

// emptied is cwd when p leaves no file of S's tree in it, so the writes
// would remove the folder the caller runs in: it is kept, empty, as git
// keeps the current working directory (setup.c's original_cwd, git 2.35),
// and the printed undo can run from it; git tracks no folder, so exact
// stays true (docs/rollback.md#the-current-folder). "" when cwd is the top
// or outside the tree, or something of S's stays in it.
func emptied(p *plan.Plan, cwd string) string {
	if cwd == "" || p.Snapshot == nil || p.Snapshot.Tree == nil {
		return ""
	}
	lib, err := p.Repo.Lib()
	if err != nil {
		return ""
	}
	tree, err := lib.LookupTree(p.Snapshot.Tree)
	if err != nil {
		return ""
	}
	defer tree.Free()
	e, err := tree.EntryByPath(cwd)
	if err != nil || e.Type != git.ObjectTree {
		return "" // no file of S's there: nothing of it is removed
	}
	sub, err := lib.LookupTree(e.Id)
	if err != nil {
		return ""
	}
	defer sub.Free()
	// S's files in the folder, less the plan's deletions, plus its writes.
	in := map[string]bool{}
	prefix := cwd + "/"
	if err := sub.Walk(func(dir string, te *git.TreeEntry) error {
		if te.Type != git.ObjectTree {
			in[prefix+dir+te.Name] = true
		}
		return nil
	}); err != nil {
		return ""
	}
	for _, c := range p.Files() {
		if strings.HasPrefix(c.Path, prefix) {
			in[c.Path] = c.TMode != 0
		}
	}
	for _, stays := range in {
		if stays {
			return ""
		}
	}
	return cwd
}
