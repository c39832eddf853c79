package capture

import (
	"os"
	"strings"

	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/treepath"
)

// SkipExcluded is the skipped (and left) reason of a path venom.exclude
// matches (docs/checkpoints.md#what-a-capture-holds).
const SkipExcluded = "excluded"

// excludedSet is what venom.exclude leaves out of one scan: each path
// status listed that a pattern matches keeps the index's version in the
// tree, as a path over the size limit does. A matched folder is listed once,
// as "folder/" with bytes 0 (as a sparse folder, docs/checkpoints.md#what-a-capture-holds), however
// many files in it changed: a dependency folder holds thousands.
type excludedSet struct {
	x       *ignore.Excluder
	seen    map[string]bool
	skipped []journal.Skipped
}

func newExcludedSet(patterns []string) *excludedSet {
	return &excludedSet{x: ignore.NewExcluder(patterns), seen: map[string]bool{}}
}

// take reports whether p is excluded, and lists it (or the folder holding
// it) in skipped the first time.
func (e *excludedSet) take(top, p string, isDir bool) bool {
	at, ok := e.x.Excluded(p, isDir || strings.HasSuffix(p, "/"))
	if !ok {
		return false
	}
	if !e.seen[at] {
		e.seen[at] = true
		var size int64
		if !strings.HasSuffix(at, "/") {
			if fi, err := os.Lstat(treepath.Abs(top, at)); err == nil && fi.Mode().IsRegular() {
				size = fi.Size()
			}
		}
		e.skipped = append(e.skipped, journal.Skipped{Path: at, Bytes: size, Reason: SkipExcluded})
	}
	return true
}
