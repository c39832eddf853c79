package plan

import (
	git "github.com/libgit2/git2go/v34"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treepath"
)

// Left reasons (docs/rollback.md#the-real-call, docs/checkpoints.md#what-a-capture-holds, docs/rollback.md#left, docs/rollback.md#outside-edits).
const (
	LeftOutside         = "outside"
	LeftTooBig          = "too_big"
	LeftSkipWorktree    = "skip_worktree"
	LeftGitlink         = "gitlink"
	LeftIgnoredInTheWay = "ignored_in_the_way"
	LeftUnreadable      = "unreadable"
	LeftExcluded        = "excluded"      // venom.exclude (docs/checkpoints.md#what-a-capture-holds)
	LeftHookSettings    = "hook_settings" // git-venom's own hooks (docs/rollback.md#hook-settings)
)

// HookFile is a file where `hook install` writes git-venom's hooks for a
// harness, with the test of whether a file's bytes hold them.
type HookFile struct {
	Harness string
	Ours    func(data []byte) bool
}

// hookSettings finds the changes that would take git-venom's hooks away:
// a hook file (files, by path) whose version now (S) holds them and
// whose target version (T) does not, or which T lacks. Our own settings
// are not a person's edit to restore over (docs/rollback.md#hook-settings):
// the path is left, its detail naming the harness. A target that holds
// the hooks too is restored as any file.
func hookSettings(r *repo.Repo, files map[string]HookFile, changes []Change) (map[string]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	var out map[string]string
	for i := range changes {
		c := &changes[i]
		f, ok := files[c.Path]
		if !ok || !regular(c.SMode) {
			continue
		}
		now, err := blob(r, c.SOid)
		if err != nil {
			return nil, err
		}
		if !f.Ours(now) {
			continue
		}
		if regular(c.TMode) {
			then, err := blob(r, c.TOid)
			if err != nil {
				return nil, err
			}
			if f.Ours(then) {
				continue
			}
		}
		if out == nil {
			out = map[string]string{}
		}
		out[c.Path] = "git-venom's " + f.Harness + " hooks"
	}
	return out, nil
}

// blob reads a blob's bytes.
func blob(r *repo.Repo, id git.Oid) ([]byte, error) {
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	b, err := lib.LookupBlob(&id)
	if err != nil {
		return nil, err
	}
	defer b.Free()
	return append([]byte(nil), b.Contents()...), nil
}

// skippedSet is the skipped paths of S and T; a sparse directory covers
// everything under it.
type skippedSet struct {
	exact map[string]string
	dirs  map[string]string
}

func newSkipped(lists ...[]journal.Skipped) skippedSet {
	s := skippedSet{exact: map[string]string{}, dirs: map[string]string{}}
	for _, l := range lists {
		for _, k := range l {
			p := quote.RawPath(k.Path, k.PathB64)
			if strings.HasSuffix(p, "/") {
				s.dirs[p] = k.Reason
			} else if _, ok := s.exact[p]; !ok {
				s.exact[p] = k.Reason
			}
		}
	}
	return s
}

func (s skippedSet) reason(p string) string {
	if r, ok := s.exact[p]; ok {
		return r
	}
	for d, r := range s.dirs {
		if strings.HasPrefix(p, d) {
			return r
		}
	}
	return ""
}

// decideLeft fills each change's left reason, in this order: gitlink,
// skipped in S or T, matched by venom.exclude, git-venom's hook settings, outside kept, blocked by a path left, and something in
// the way of a write that S does not hold.
func decideLeft(top string, changes []Change, outside string, exclude *ignore.Excluder, hooks map[string]string,
	sSkipped, tSkipped []journal.Skipped) {
	skipped := newSkipped(sSkipped, tSkipped)
	for i := range changes {
		c := &changes[i]
		switch {
		case c.SMode == Gitlink || c.TMode == Gitlink:
			c.Left = LeftGitlink
			if c.TMode == Gitlink {
				d := c.TOid.String()
				c.Detail = &d
			}
		case skipped.reason(c.Path) != "":
			c.Left = skipped.reason(c.Path)
		case excludedPath(exclude, c.Path):
			c.Left = LeftExcluded
		case hooks[c.Path] != "":
			c.Left = LeftHookSettings
			d := hooks[c.Path]
			c.Detail = &d
		case c.Class == Outside && outside == "keep":
			c.Left = LeftOutside
		}
	}
	// Paths that stay where they are may block a write: a kept file where a
	// folder must go, or the reverse (docs/rollback.md#outside-edits). A
	// plan that only deletes has nothing to block.
	writes := 0
	for i := range changes {
		if changes[i].Left == "" && changes[i].Writes() {
			writes++
		}
	}
	if writes == 0 {
		return
	}
	byPath := make(map[string]*Change, len(changes))
	for i := range changes {
		byPath[changes[i].Path] = &changes[i]
	}
	leftDirs := map[string]*Change{} // every parent folder of a left path S holds
	for i := range changes {
		c := &changes[i]
		if c.Left == "" || c.SMode == 0 {
			continue
		}
		for d := filepath.Dir(c.Path); d != "." && d != "/"; d = filepath.Dir(d) {
			leftDirs[d] = c
		}
	}
	// The folders above the writes found to be folders: each is looked at
	// once, not once for every file beneath it.
	folders := map[string]bool{}
	for i := range changes {
		c := &changes[i]
		if c.Left != "" || !c.Writes() {
			continue
		}
		if b := leftDirs[c.Path]; b != nil {
			c.block(b)
			continue
		}
		for d := filepath.Dir(c.Path); d != "." && d != "/"; d = filepath.Dir(d) {
			if b := byPath[d]; b != nil && b.Left != "" && b.SMode != 0 {
				c.block(b)
				break
			}
		}
		if c.Left != "" {
			continue
		}
		if p, ok := inTheWay(top, c, byPath, folders); ok {
			c.Left = LeftIgnoredInTheWay
			if p != c.Path {
				d := p
				c.Detail = &d
			}
		}
	}
}

// excludedPath: venom.exclude matches p, or a folder holding it.
func excludedPath(x *ignore.Excluder, p string) bool {
	_, ok := x.Excluded(p, false)
	return ok
}

func (c *Change) block(by *Change) {
	c.Left = by.Left
	d := by.Path
	c.Detail = &d
}

// inTheWay reports what a write of c would replace that S does not hold: a
// file or other non-folder at a parent or at the path, or a folder holding
// anything but paths the rollback deletes (docs/rollback.md#the-real-call, docs/rollback.md#left).
// folders holds the parent folders already found to be folders, and
// takes those found here.
func inTheWay(top string, c *Change, byPath map[string]*Change, folders map[string]bool) (string, bool) {
	deleted := func(p string) bool {
		d := byPath[p]
		return d != nil && d.Left == "" && d.SMode != 0 && d.TMode == 0
	}
	for i := strings.IndexByte(c.Path, '/'); i >= 0; i = nextSlash(c.Path, i) {
		d := c.Path[:i]
		if folders[d] {
			continue
		}
		fi, err := os.Lstat(treepath.Abs(top, d))
		if err != nil {
			return "", false // nothing there: the write makes the folders
		}
		if fi.IsDir() {
			folders[d] = true
			continue
		}
		if deleted(d) {
			return "", false // S's file there goes first
		}
		return d, true
	}
	full := treepath.Abs(top, c.Path)
	fi, err := os.Lstat(full)
	if err != nil {
		return "", false
	}
	switch {
	case fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0:
		if c.SMode != 0 || deleted(c.Path) {
			return "", false
		}
		return c.Path, true
	case fi.IsDir():
		// Everything in the folder must be something the rollback deletes.
		blocked := ""
		_ = filepath.WalkDir(full, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				blocked = c.Path
				return filepath.SkipAll
			}
			if e.IsDir() {
				// A repository of its own in the folder: never the
				// rollback's to delete.
				if repo.Holds(p) {
					blocked = c.Path
					return filepath.SkipAll
				}
				return nil
			}
			rel, _ := filepath.Rel(top, p)
			rel = filepath.ToSlash(rel)
			if !deleted(rel) {
				blocked = rel
				return filepath.SkipAll
			}
			return nil
		})
		if blocked != "" {
			return blocked, true
		}
		return "", false
	default:
		// FIFOs, sockets and devices: git never holds them (docs/rollback.md#left).
		return c.Path, true
	}
}

// nextSlash is the index of the next '/' in p after i, or -1.
func nextSlash(p string, i int) int {
	if j := strings.IndexByte(p[i+1:], '/'); j >= 0 {
		return i + 1 + j
	}
	return -1
}

// addSkipped reports in left every path S or T skipped that the change set
// does not name: a capture keeps the index's version of such a path, so the
// trees may agree while the files differ, and the rollback never touches it
// (docs/checkpoints.md#what-a-capture-holds: "Never touched; reported in left").
func addSkipped(changes []Change, set pathspec.Set, lists ...[]journal.Skipped) []Change {
	skipped := 0
	for _, l := range lists {
		skipped += len(l)
	}
	if skipped == 0 {
		return changes
	}
	seen := make(map[string]bool, len(changes))
	for _, c := range changes {
		seen[c.Path] = true
	}
	for _, l := range lists {
		for _, k := range l {
			p := quote.RawPath(k.Path, k.PathB64)
			if seen[p] || !set.Match(p) {
				continue
			}
			seen[p] = true
			changes = append(changes, Change{Path: p, Left: k.Reason})
		}
	}
	return changes
}
