package capture

import (
	"bytes"
	"context"
	"io"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treepath"
)

// git runs git on the index idx, with b's pins.
func (b *base) git(ctx context.Context, r *repo.Repo, idx string, stdin []byte, args ...string) ([]byte, error) {
	return b.gitCall(ctx, r, idx, gitcli.Call{Stdin: bytesReader(stdin)}, args...)
}

// gitCall is git with c's standard input and error.
func (b *base) gitCall(ctx context.Context, r *repo.Repo, idx string, c gitcli.Call, args ...string) ([]byte, error) {
	c.Env, c.Pins = []string{"GIT_INDEX_FILE=" + idx}, b.pins
	return r.Git.RunCall(ctx, c, args...)
}

func bytesReader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// listChanges lists what differs from the index: the quick scan's answer
// when it stood for git status, else git status's (status, as the memo's
// key takes it). unopened counts folders git status could not open, listed
// in snap.Skipped as unreadable rather than missed silently. Submodules
// give only their commits: listGitlinks asks without optional locks, as
// git status in each would rewrite the user's own index.
func listChanges(ctx context.Context, r *repo.Repo, b base, snap *Snapshot) (status []byte, changes []scan.Change, unopened int, err error) {
	if b.quick != nil {
		status, changes := b.quick.List()
		return status, changes, 0, nil
	}
	if err := testhook.PointIn(ctx, "capture-status"); err != nil {
		return nil, nil, 0, store.Failed("status", err)
	}
	var warnings bytes.Buffer
	status, err = b.gitCall(ctx, r, b.idx, gitcli.Call{Stderr: &warnings}, "status", "--porcelain=v2", "-z", "--no-renames",
		"--untracked-files=all", "--ignore-submodules=dirty")
	if err != nil {
		return nil, nil, 0, store.Failed("status", err)
	}
	if changes, err = scan.ParseStatus(status); err != nil {
		return nil, nil, 0, store.Failed("status", err)
	}
	for _, dir := range scan.Unopened(warnings.Bytes()) {
		snap.Skipped = append(snap.Skipped, journal.Skipped{Path: dir, Reason: "unreadable"})
		unopened++
	}
	if unopened > 0 && b.persistent {
		// The private index's untracked cache (private.Pins) keeps such a
		// folder as read, empty, once its stat data is old enough to trust:
		// the next status would open nothing and warn of nothing. Without
		// the cache, every status opens it again and says so.
		c := gitcli.Call{Env: []string{"GIT_INDEX_FILE=" + b.idx}, Pins: []string{"-c", "core.untrackedCache=false"}}
		if _, err := r.Git.RunCall(ctx, c, "update-index", "--no-untracked-cache"); err != nil {
			return nil, nil, 0, store.Failed("update-index", err)
		}
	}
	for _, c := range changes {
		if c.Untracked {
			snap.untracked = append(snap.untracked, c.Path)
		}
	}
	return status, changes, unopened, nil
}

// sorted is what changed, sorted into content updates of paths the index
// holds, files the index does not hold, and paths that are gone.
type sorted struct {
	updates, additions, removes []string
	// written are the files to store, total their bytes and trackedBytes
	// those of the tracked ones among them.
	written             []sizedFile
	total, trackedBytes int64
	// modes are the listed files' and links' modes, by path.
	modes map[string]uint32
	// gitlinks are the paths that are nested repositories or submodules
	// (the user's index's gitlinks among them); modified, those status
	// says have modified content.
	gitlinks, modified map[string]bool
	// skipped are the listed paths left out, besides the excluded ones.
	skipped []journal.Skipped
}

// sortChanges sorts the listed paths, stats being their lstat: a path
// outside the sparse checkout or excluded is left at the index's version,
// a file past the size limit or unreadable is skipped.
func sortChanges(top string, flagged []gitindex.Entry, changes []scan.Change, stats []scan.Stat, userLinks map[string]string, lim Limits) *sorted {
	s := &sorted{modes: map[string]uint32{}, gitlinks: map[string]bool{}, modified: map[string]bool{}}
	for p := range userLinks {
		s.gitlinks[p] = true
	}
	sparse := newSparseArea(flagged)
	excluded := newExcludedSet(lim.Exclude)
	add := func(c scan.Change) {
		if c.Untracked {
			s.additions = append(s.additions, c.Path)
		} else {
			s.updates = append(s.updates, c.Path)
		}
	}
	for i, c := range changes {
		if sparse.outside(c.Path, c.Untracked) || excluded.take(top, c.Path, c.Submodule != "") {
			continue
		}
		full := treepath.Abs(top, c.Path)
		if len(c.Submodule) == 4 && c.Submodule[2] == 'M' {
			s.modified[c.Path] = true
		}
		fi := &stats[i]
		if err := fi.Err; err != nil {
			if treepath.Gone(err) {
				s.removes = append(s.removes, c.Path)
				continue
			}
			s.skipped = append(s.skipped, journal.Skipped{Path: c.Path, Reason: "unreadable"})
			continue
		}
		switch {
		case fi.IsRegular():
			if fi.Size > lim.MaxFileBytes {
				s.skipped = append(s.skipped, journal.Skipped{Path: c.Path, Bytes: fi.Size, Reason: "too_big"})
				continue
			}
			if !readable(full) {
				s.skipped = append(s.skipped, journal.Skipped{Path: c.Path, Bytes: fi.Size, Reason: "unreadable"})
				continue
			}
			s.total += fi.Size
			s.written = append(s.written, sizedFile{c.Path, fi.Size, c.Untracked})
			if !c.Untracked {
				s.trackedBytes += fi.Size
			}
			s.modes[c.Path] = 0o100644
			if fi.Mode&0o100 != 0 {
				s.modes[c.Path] = 0o100755
			}
			add(c)
		case fi.IsLink():
			s.modes[c.Path] = 0o120000
			add(c)
		case fi.IsDir():
			if repo.Holds(full) {
				// A nested repository or a submodule: its commit, as a gitlink.
				s.gitlinks[c.Path] = true
				add(c)
			} else {
				// A tracked file replaced by a folder: the folder's files are
				// listed on their own; the file's entry goes.
				s.removes = append(s.removes, c.Path)
			}
		default:
			// FIFOs, sockets and devices: git never holds them (docs/rollback.md#left).
			s.removes = append(s.removes, c.Path)
		}
	}
	s.skipped = append(s.skipped, excluded.skipped...)
	return s
}

// readable says whether the process may read path: access(2), one
// system call, where opening and closing it would be three or more for
// every file of a large capture. A file that still cannot be opened when
// it is stored sends the capture the index way, as a file that changed.
func readable(path string) bool {
	return unix.Access(path, unix.R_OK) == nil
}
