package capture

import (
	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/repo"
)

// Written is a file a rollback has just placed in the tree
// (private.Written).
type Written = private.Written

// NoteWritten tells the tree's private index that files were just written
// from known objects, so that the next capture finds them clean by their
// stat data (private.NoteWritten).
func NoteWritten(r *repo.Repo, files []Written, known Known) (noted int) {
	return private.NoteWritten(r, files, known)
}

// Known is a tree the caller made already, with what it changed
// (private.Known).
type Known = private.Known

// KnownChange is one path of Known (private.KnownChange).
type KnownChange = private.KnownChange
