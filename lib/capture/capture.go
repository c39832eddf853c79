// Package capture turns one tree's state into git objects, the recipe of
// docs/checkpoints.md#how-a-capture-runs: an index whose stat cache spares
// hashing, git's own status for what changed, only those paths stored,
// the tree written; the user's index, HEAD, branches and files untouched.
// Its shortcuts (docs/checkpoints.md#shortcuts) only spare work, each
// falling back to the plain way when it cannot vouch for its answer.
package capture

import (
	"time"

	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/gitfiles"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Limits bound one capture (docs/checkpoints.md#configuration).
type Limits struct {
	MaxFileBytes  int64
	MaxTotalBytes int64
	// Exclude is venom.exclude's patterns (docs/checkpoints.md#what-a-capture-holds): what they match
	// is left at the index's version and listed as skipped, "excluded".
	Exclude []string
	// Found, when set, is told what a scan found to store (files and their
	// bytes) before they are stored: a big capture's progress line.
	Found func(files int, bytes int64)
	// Timeout is venom.timeout, which the caller's context holds the
	// capture to: its error names it (timeout.go).
	Timeout time.Duration
}

// LimitsOf is the limits the settings give.
func LimitsOf(c config.Config) Limits {
	return Limits{MaxFileBytes: c.MaxFileBytes, MaxTotalBytes: c.MaxTotalBytes, Exclude: c.Exclude, Timeout: c.Timeout}
}

// key is the limits as part of a memo's key: what was skipped as too big
// or excluded depends on them.
func (l Limits) key() string {
	return fmt.Sprintf("%d:%d\x00%q\x00", l.MaxFileBytes, l.MaxTotalBytes, l.Exclude)
}

// memoKey is what the memo's key holds besides files and git's settings
// files: the limits, and the variables git takes settings from
// (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_ATTR_SOURCE: git -c
// core.autocrlf=input stores other blobs), each by name at the value git
// gets, so the key is the same whether git ran the command or not.
func memoKey(r *repo.Repo, lim Limits) string {
	vars := map[string]string{}
	for _, kv := range r.Git.Env {
		if strings.HasPrefix(kv, "GIT_CONFIG_") || strings.HasPrefix(kv, "GIT_ATTR_") {
			name, _, _ := strings.Cut(kv, "=")
			vars[name] = kv
		}
	}
	key := lim.key()
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		key += vars[name] + "\x00"
	}
	return key
}

// Object is one git object held in memory until a pack stores it.
type Object = store.Object

// Snapshot is a captured tree, before any commit exists for it.
type Snapshot struct {
	Tree   *git.Oid
	Head   *git.Oid // nil on an unborn HEAD
	Branch string   // short name; "" when HEAD is on no branch
	// OffBranch is the ref HEAD is attached to when it lies outside
	// refs/heads (git symbolic-ref HEAD refs/remotes/origin/x): HEAD is
	// then on no branch, as git branch --show-current says.
	OffBranch  string
	Skipped    []journal.Skipped
	Submodules []journal.Submodule
	// memo lets the next scan of a private index reuse this one.
	memo private.Memo
	// moved are the tracked files whose content differs from the private
	// index's, and movedBytes their size, when the tree path built the tree.
	moved      []string
	movedBytes int64
	// untracked are the untracked paths git status listed (none when the
	// quick scan stood for it).
	untracked []string
	// held are the new objects of the tree, not on disk yet (TakeHeld).
	held []Object
	// stored are the ids of the objects this snapshot wrote to packs this
	// command holds (StoreCommit need not write them again).
	stored []git.Oid
	// listing is the memo's listing, path by path, when this scan made
	// one (carry.go).
	listing *private.ListingWriter
}

// Store writes the snapshot's new objects to the repository as one pack,
// recorded as git-venom's and held until the command ends. Without
// anything to write it does nothing. A checkpoint's commit goes through
// StoreCommit.
func (s *Snapshot) Store(r *repo.Repo) error {
	return s.store(r, nil, nil)
}

// HeadString is Head as the log writes it: a hex id or null.
func (s *Snapshot) HeadString() *string {
	if s.Head == nil {
		return nil
	}
	h := s.Head.String()
	return &h
}

// base is the index a scan starts from, and what is known of it.
type base struct {
	idx string
	// flagged are the user's index entries captures treat specially:
	// skip-worktree, sparse directories and gitlinks (with their oids).
	flagged []gitindex.Entry
	// persistent: idx is the private index kept between captures. Content
	// changes of tracked paths are written into it; deletions and untracked
	// files only into a scratch copy, so its membership stays the user's.
	persistent bool
	// memo is the tree an earlier scan gave for the same status output and
	// the same stat data of the paths it listed (private index only).
	memo private.Memo
	// quick, when set, stands for git status: what the quick scan found.
	quick *scan.Result
	// settings are git's files outside the tree (gitfiles.Settings),
	// listed once per capture for the memo's key and the quick scan's.
	settings []string
	// pins are extra -c flags for every git call on idx.
	pins []string
	// tree is the tree of idx's content, when known (private index only):
	// the capture is then built on it without an index write.
	tree *git.Oid
	// listings reads and writes the memo's listing (private index only).
	listings *private.Index
	// started is when the capture began, before any of its lstat calls:
	// the memo and its listing trust only stat data of files last changed
	// far enough before it (lib/racy). Measured from when the listing is
	// written instead, a capture that took longer than the window could
	// trust a file changed again after its lstat within the same tick.
	started time.Time
}

// Take captures r's tree into objects and returns the snapshot. tmpDir holds
// temporary index files; the caller holds the repository's lock.
func Take(ctx context.Context, r *repo.Repo, tmpDir string, lim Limits) (*Snapshot, error) {
	snap, err := TakeHeld(ctx, r, tmpDir, lim)
	if err == nil {
		err = snap.Store(r)
	}
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// TakeHeld is Take, except that the new objects a capture packs itself are
// held in memory until snap.Store writes them, with the commit the caller
// makes of the tree: one pack a checkpoint, no loose commit. Until then
// the snapshot's tree may not be on disk.
func TakeHeld(ctx context.Context, r *repo.Repo, tmpDir string, lim Limits) (*Snapshot, error) {
	// Shortcut 1: the private index, unless another capture holds it.
	if p := private.Open(r); p != nil {
		defer p.Close()
		snap, err := takePrivate(ctx, r, p, tmpDir, lim)
		if err == nil || !errors.Is(err, private.ErrUnusable) {
			return snap, explainTimeout(err, nil, lim)
		}
		// The private index could not be used: start again from a copy.
	}
	snap, err := takeCopy(ctx, r, tmpDir, lim)
	return snap, explainTimeout(err, nil, lim)
}

// takeCopy captures from a copy of the user's index: shortcut 1's fallback.
func takeCopy(ctx context.Context, r *repo.Repo, tmpDir string, lim Limits) (*Snapshot, error) {
	idx, err := private.CopyIndex(r.Index, tmpDir)
	if err != nil {
		return nil, store.Failed("copy_index", err)
	}
	defer statefile.Remove(idx)
	flagged, err := private.PrepareCopy(ctx, r, idx)
	if err != nil {
		return nil, err
	}
	return scanIndex(ctx, r, base{idx: idx, flagged: flagged}, tmpDir, lim)
}

// takePrivate captures through the private index p (made again first when
// the user's index changed since), and leaves what the next capture's
// shortcuts rest on: the scan record, the memo, the index moved on.
func takePrivate(ctx context.Context, r *repo.Repo, p *private.Index, tmpDir string, lim Limits) (*Snapshot, error) {
	started := time.Now()
	ready, err := p.Ready(ctx, r, tmpDir)
	testhook.Timed("capture-ready", started)
	if err != nil {
		return nil, err
	}
	b := base{idx: ready.Index, flagged: ready.Flagged, persistent: true, memo: ready.Memo, pins: private.Pins,
		settings: gitfiles.Settings(r.Files()), tree: ready.Tree, listings: p, started: started}
	// Shortcut 2: the quick scan stands for git status when its record
	// holds.
	q := p.Quick()
	rec := q.Load()
	var quickErr error
	var mon *scan.Monitored
	if rec.Walked() {
		// Asked before the scan stats anything (scan/monitor.go).
		mon = q.Ask(ctx, r)
		res, drop, err := q.Scan(r, rec, b.settings, mon)
		quickErr = err
		if errors.Is(err, gitindex.ErrFault) {
			// Another process cut the private index short in place: git
			// status could not read it either. It is only a cache.
			p.Discard()
			return nil, private.ErrUnusable
		}
		if drop {
			q.Drop()
			rec = nil
		}
		if err == nil {
			b.quick = res
		}
	}
	t0 := time.Now()
	snap, err := scanIndex(ctx, r, b, tmpDir, lim)
	testhook.Timed("capture-scan-index", t0)
	if err != nil {
		// A failed git call may have left the index half-way; it is only a
		// cache, so it goes.
		p.Discard()
		if objectGone(err) {
			// Its tree, or the memo's, was an object no ref reached, and a
			// person's gc --prune=now took it: start again from a copy of
			// the user's index, whose blobs git's gc keeps.
			return nil, private.ErrUnusable
		}
		return nil, err
	}
	t0 = time.Now()
	switch {
	case b.quick != nil && b.quick.Record != nil:
		q.Save(b.quick.Record)
	case b.quick == nil && !rec.Walked():
		q.Remake(ctx, r, rec, snap.untracked, b.settings)
	case b.quick == nil && scan.TooManyChanges(quickErr):
		q.Refresh(ctx, r, rec, snap.untracked, b.settings)
	}
	if snap.memo.Tree != "" {
		p.Remember(ready, snap.memo, snap.listing)
	}
	snap.listing.Abandon() // unless Remember put it in place
	snap.listing = nil
	testhook.Timed("capture-keep", t0)
	t0 = time.Now()
	p.MoveOn(ctx, r, ready, snap.moved, snap.movedBytes, func() error { return snap.Store(r) })
	testhook.Timed("capture-move-on", t0)
	// The monitor's token holds for the next capture only where this one's
	// quick scan judged the files after asking; the index and the record
	// it keeps are the ones MoveOn and the record's save left.
	switch {
	case mon != nil && b.quick != nil:
		q.Keep(mon, b.quick.Tracked)
	case mon != nil:
		q.Forget()
	}
	return snap, nil
}

// scanIndex is docs/checkpoints.md#how-a-capture-runs steps 3 and 4 as one
// scan: git status (or the quick scan) lists every difference from the
// index, and only those paths are stored, shortcuts 3 to 5 first.
func scanIndex(ctx context.Context, r *repo.Repo, b base, tmpDir string, lim Limits) (*Snapshot, error) {
	snap := &Snapshot{}
	userLinks := map[string]string{}
	for _, e := range b.flagged {
		switch {
		case e.SkipWorktree || e.SparseDir:
			snap.Skipped = append(snap.Skipped, skippedEntry(r.Top, e))
		case e.Mode == 0o160000:
			userLinks[e.Path] = hex.EncodeToString(e.Oid[:])
		}
	}
	// The carry straight from the quick scan, when the memo's listing can
	// key it: a steady capture of a large tree lists nothing whole.
	if b.quick != nil && b.listable() {
		if err := testhook.PointIn(ctx, "capture-scan"); err != nil {
			return nil, store.Failed("status", err)
		}
		t0 := time.Now()
		snap, err := steady(ctx, r, &b, private.EnvKey(memoKey(r, lim), b.settings), lim)
		testhook.Timed("capture-steady", t0)
		if err == nil {
			return snap, nil
		}
		if !errors.Is(err, errNoCarry) && !errors.Is(err, store.ErrNoTreePath) {
			return nil, err
		}
	}
	t0 := time.Now()
	status, changes, unopened, err := listChanges(ctx, r, b, snap)
	testhook.Timed("capture-list", t0)
	if err != nil {
		return nil, err
	}
	// What git status listed untracked makes the next quick scan's record
	// (takePrivate), whichever shortcut below makes the snapshot: taken
	// from the memo or the carry without it, the record's walk was
	// compared with nothing, judged to disagree with git, and after two
	// such captures the tree kept to git status.
	listed := snap.untracked
	if !(b.quick != nil && b.listable()) {
		if err := testhook.PointIn(ctx, "capture-scan"); err != nil {
			return nil, store.Failed("status", err)
		}
	}
	// Each listed path is looked at once (lstat), for the memo's key and
	// for sorting it: a skipped file costs that and nothing more.
	stats := scan.LstatAll(r.Top, changes)

	// Shortcut 3: the memo. A submodule's dirtiness is not in status's
	// output: no memo then; nor with a folder git could not open, which
	// changes nothing in status's output either.
	var sig string
	if b.persistent && len(userLinks) == 0 && unopened == 0 {
		sig = private.Signature(memoKey(r, lim), b.settings, status, changes, stats, b.started)
		if sig != "" && sig == b.memo.Sig {
			if snap, err := fromMemo(r, b.memo, snap.Skipped); err == nil {
				snap.untracked = listed
				return snap, nil
			}
		}
	}
	// Its second half, the carry: the memo's tree with only the paths
	// whose listing moved edited.
	var env string
	var order []int32
	if b.listable() && unopened == 0 {
		env = private.EnvKey(memoKey(r, lim), b.settings)
		order = sortedOrder(changes)
		if c, err := carryFrom(r, &b, env, changes, stats, order); err == nil {
			snap, err := takeCarried(ctx, r, &b, c, sig, lim)
			if err == nil {
				keepListing(&b, snap, env, changes, stats, order)
				snap.untracked = listed
				return snap, nil
			}
			if !errors.Is(err, errNoCarry) && !errors.Is(err, store.ErrNoTreePath) {
				return nil, err
			}
		}
	}
	done := func(snap *Snapshot, err error) (*Snapshot, error) {
		if err == nil {
			keepListing(&b, snap, env, changes, stats, order)
		}
		return snap, err
	}

	t0 = time.Now()
	s := sortChanges(r.Top, b.flagged, changes, stats, userLinks, lim)
	testhook.Timed("capture-sort", t0)
	snap.Skipped = append(snap.Skipped, s.skipped...)
	if s.total > lim.MaxTotalBytes {
		return nil, tooLargeError(s.written, s.total, lim)
	}
	if lim.Found != nil {
		lim.Found(len(s.updates)+len(s.additions), s.total)
	}

	// Shortcut 4 (with 5 inside): the tree edit.
	if b.tree != nil && !attributesFromIndex(b.flagged, s.updates, s.removes, s.modes) {
		t0 = time.Now()
		tree, held, spilled, err := editTree(ctx, r, b.tree, s, nil)
		testhook.Timed("capture-edit-tree", t0)
		if err == nil {
			snap.held, snap.stored = held, spilled
			for _, p := range s.updates {
				if s.modes[p] != 0 && !s.gitlinks[p] {
					snap.moved = append(snap.moved, p)
				}
			}
			snap.movedBytes = s.trackedBytes
			defer testhook.Timed("capture-finish", time.Now())
			return done(finish(ctx, r, snap, tree, sig, s.gitlinks, userLinks, s.modified))
		}
		if !errors.Is(err, store.ErrNoTreePath) {
			return nil, explainTimeout(err, s, lim)
		}
	}
	tree, err := indexWay(ctx, r, b, tmpDir, s)
	if err != nil {
		return nil, explainTimeout(err, s, lim)
	}
	return done(finish(ctx, r, snap, tree, sig, s.gitlinks, userLinks, s.modified))
}

// fromMemo is the snapshot the memo keeps, with the current HEAD and
// flagged, the skip-worktree entries as they are now. The memo's key
// holds what status listed, and status never looks at a skip-worktree
// path's file: the memo's own entries for them give the size that file
// had at the memo's capture.
func fromMemo(r *repo.Repo, m private.Memo, flagged []journal.Skipped) (*Snapshot, error) {
	id, err := m.TreeIn(r)
	if err != nil {
		return nil, err
	}
	skipped := make([]journal.Skipped, 0, len(m.Skipped)+len(flagged))
	for _, s := range flagged {
		skipped = append(skipped, s.Shown())
	}
	for _, s := range m.Skipped {
		if s.Reason != skipWorktree {
			skipped = append(skipped, s)
		}
	}
	sortSkipped(skipped)
	snap := &Snapshot{Tree: id, Skipped: skipped, Submodules: m.Submodules, memo: m}
	if err := readHead(r, snap); err != nil {
		return nil, err
	}
	return snap, nil
}
