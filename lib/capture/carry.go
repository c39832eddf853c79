package capture

import (
	"context"
	"errors"
	"sort"
	"strings"
	"unsafe"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treeedit"
)

// The carry (docs/checkpoints.md#shortcuts): when the memo's key does not
// match, its listing tells which paths moved, appeared or went, and the
// capture is the memo's tree with only those edited: a turn's files are
// hashed, not the untracked ones beside them. It holds only for the same
// base, limits and settings, with nothing skipped, excluded, flagged,
// nested or .gitattributes among the changes; any doubt stores them all.

// errNoCarry sends a capture to store every listed path.
var errNoCarry = errors.New("the memo's listing does not apply")

// listable says whether b's scans can keep a listing: a private index
// with a tree and no entry treated specially.
func (b *base) listable() bool {
	return b.persistent && b.tree != nil && len(b.flagged) == 0 && b.listings != nil
}

// sortedOrder is the indexes of changes in byte order of their paths, or
// nil when a path is listed twice. A quick scan lists the tracked files
// (index order) then the untracked ones (sorted): two runs to merge, not
// a sort of 300,000 strings.
func sortedOrder(changes []scan.Change) []int32 {
	n := len(changes)
	cut, breaks := 0, 0
	for i := 1; i < n; i++ {
		if changes[i-1].Path >= changes[i].Path {
			cut = i
			breaks++
		}
	}
	order := make([]int32, 0, n)
	switch breaks {
	case 0:
		for i := range n {
			order = append(order, int32(i))
		}
	case 1:
		i, j := 0, cut
		for i < cut || j < n {
			if j == n || i < cut && changes[i].Path < changes[j].Path {
				order = append(order, int32(i))
				i++
			} else {
				order = append(order, int32(j))
				j++
			}
		}
	default:
		for i := range n {
			order = append(order, int32(i))
		}
		sort.Slice(order, func(a, b int) bool { return changes[order[a]].Path < changes[order[b]].Path })
	}
	for k := 1; k < len(order); k++ {
		if changes[order[k-1]].Path == changes[order[k]].Path {
			return nil
		}
	}
	return order
}

// carried is what the carry found: the memo's tree, the listed paths to
// store again with their lstat (in byte order), the paths back to the
// base's version, and the bytes of the carried files.
type carried struct {
	tree       *git.Oid
	delta      []scan.Change
	deltaStats []scan.Stat
	reverts    []string
	bytes      int64
	// tracked are the carried files the index holds, trackedBytes their
	// size: content that differs from the private index's, as the
	// capture's moved files (MoveOn).
	tracked      []string
	trackedBytes int64
	rd           *private.ListingReader // the memo's listing
	more         bool
	top          string
	vouched      int // files taken on the monitor's word
}

// carryStart opens the memo's listing, when it can key this scan (env:
// private.EnvKey of its limits and settings).
func carryStart(b *base, env string) (*carried, error) {
	m := b.memo
	if !b.listable() || m.Listing == "" || m.Base != b.tree.String() || m.Env != env ||
		len(m.Skipped) > 0 || len(m.Submodules) > 0 {
		return nil, errNoCarry
	}
	rd, err := b.listings.OpenListing(m)
	if err != nil {
		return nil, errNoCarry
	}
	return &carried{rd: rd, more: rd.Next()}, nil
}

// close lets the memo's listing go.
func (c *carried) close() { c.rd.Close() }

// take compares one listed path, in byte order, with the memo's listing.
// vouched: the file system monitor vouches that the path did not change
// since the last capture, whose listing this is (scan.Result.Vouched), and
// st is not taken yet: a file the listing holds as stored keeps its stat
// data there, any other is stat'ed now.
func (c *carried) take(ch *scan.Change, st *scan.Stat, vouched bool) error {
	if ch.Submodule != "" {
		return errNoCarry
	}
	// Paths are kept as copies: a steady capture's untracked paths share
	// one block's memory.
	for c.more && string(c.rd.Listed().Path) < ch.Path {
		c.reverts = append(c.reverts, string(c.rd.Listed().Path))
		c.more = c.rd.Next()
	}
	if vouched {
		if l := c.rd.Listed(); c.more && string(l.Path) == ch.Path && l.Kind == private.ListedFile {
			*st = l.Stat
			st.Err = nil
			c.vouched++
		} else {
			*st = scan.LstatOne(c.top, ch.Path)
		}
	}
	if c.more && string(c.rd.Listed().Path) == ch.Path {
		same := c.rd.Listed().Same(st)
		c.more = c.rd.Next()
		if same {
			if st.Err == nil && st.IsRegular() {
				c.bytes += st.Size
			}
			if st.Err == nil && !ch.Untracked {
				c.tracked = append(c.tracked, strings.Clone(ch.Path))
				c.trackedBytes += st.Size
			}
			return nil
		}
	}
	if isAttributes(ch.Path) {
		// It can change how every other file is stored.
		return errNoCarry
	}
	c.delta = append(c.delta, scan.Change{Path: strings.Clone(ch.Path), Untracked: ch.Untracked})
	c.deltaStats = append(c.deltaStats, *st)
	return nil
}

// end takes the rest of the memo's listing as gone, and checks that the
// memo's tree is still there.
func (c *carried) end(r *repo.Repo, m private.Memo) error {
	for ; c.more; c.more = c.rd.Next() {
		c.reverts = append(c.reverts, string(c.rd.Listed().Path))
	}
	if c.rd.Err() != nil {
		return errNoCarry
	}
	for _, p := range c.reverts {
		if isAttributes(p) {
			return errNoCarry
		}
	}
	var err error
	if c.tree, err = m.TreeIn(r); err != nil {
		return errNoCarry
	}
	return nil
}

// carryFrom compares the memo's listing with this scan's listing (order
// being sortedOrder(changes)).
func carryFrom(r *repo.Repo, b *base, env string, changes []scan.Change, stats []scan.Stat, order []int32) (*carried, error) {
	if order == nil {
		return nil, errNoCarry
	}
	c, err := carryStart(b, env)
	if err != nil {
		return nil, err
	}
	defer c.close()
	for _, i := range order {
		if err := c.take(&changes[i], &stats[i], false); err != nil {
			return nil, err
		}
	}
	return c, c.end(r, b.memo)
}

// steadyBlock is how many paths the steady carry stats at once.
const steadyBlock = 2048

// steadyBatch is one block of the steady carry's paths and their lstat.
// Two take turns: while one block's files are stat'ed, the paths of the
// next are gathered and those of the last compared with the memo's
// listing, which on a tree of 100,000 untracked files was a tenth of the
// capture spent with the stat workers idle.
type steadyBatch struct {
	block []scan.Change
	// arena holds the block's untracked paths in one buffer: 300,000 of
	// them were as many strings.
	arena   []byte
	stats   []scan.Stat
	vouched []bool
	some    []scan.Stat
	asked   []scan.Change
	at      []int
	done    chan struct{} // closed when stats holds the block's; nil when none runs
}

func newSteadyBatch() *steadyBatch {
	return &steadyBatch{block: make([]scan.Change, 0, steadyBlock), arena: make([]byte, 0, 64*steadyBlock),
		vouched: make([]bool, steadyBlock)}
}

// addUntracked puts an untracked path, copied into the arena, at the
// block's end.
func (s *steadyBatch) addUntracked(p []byte) {
	if len(s.arena)+len(p) > cap(s.arena) {
		// A new buffer: the block's paths so far keep the old one.
		s.arena = make([]byte, 0, max(cap(s.arena), len(p)))
	}
	s.arena = append(s.arena, p...)
	s.block = append(s.block, scan.Change{Path: unsafe.String(unsafe.SliceData(s.arena[len(s.arena)-len(p):]), len(p)), Untracked: true})
}

// start stats the block's files in the background. vouch, when set, is
// the file system monitor's word: the untracked files it vouches for are
// not stat'ed (a tree of 100,000 untracked files was 100,000 lstat calls
// a capture), take reading their stat data from the listing.
func (s *steadyBatch) start(top string, vouch func(string) bool) {
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if vouch == nil {
			s.stats = scan.LstatInto(top, s.block, s.stats)
			clear(s.vouched)
			return
		}
		s.asked, s.at = s.asked[:0], s.at[:0]
		for k := range s.block {
			s.vouched[k] = s.block[k].Untracked && vouch(s.block[k].Path)
			if !s.vouched[k] {
				s.asked, s.at = append(s.asked, s.block[k]), append(s.at, k)
			}
		}
		s.some = scan.LstatInto(top, s.asked, s.some)
		if cap(s.stats) < len(s.block) {
			s.stats = make([]scan.Stat, len(s.block))
		}
		s.stats = s.stats[:len(s.block)]
		for j, k := range s.at {
			s.stats[k] = s.some[j]
		}
	}()
}

// wait waits for the block's lstat, if one runs.
func (s *steadyBatch) wait() {
	if s.done != nil {
		<-s.done
		s.done = nil
	}
}

// take waits for the block's lstat, compares its paths with the memo's
// listing through c, and empties the block.
func (s *steadyBatch) take(c *carried) error {
	s.wait()
	for k := range s.block {
		if err := c.take(&s.block[k], &s.stats[k], s.vouched[k]); err != nil {
			return err
		}
	}
	s.block, s.arena = s.block[:0], s.arena[:0]
	return nil
}

// steady is the carry straight from a quick scan's answer: its paths are
// stat'ed and compared with the memo's listing a block at a time, never
// listed whole, nor hashed into the memo's key. A steady capture of a tree
// of 300,000 untracked files held their changes, their lstat, the
// listing's text and its digest at once: five times git status's memory.
// errNoCarry: the capture stores every listed path.
func steady(ctx context.Context, r *repo.Repo, b *base, env string, lim Limits) (*Snapshot, error) {
	if b.quick == nil {
		return nil, errNoCarry
	}
	c, err := carryStart(b, env)
	if err != nil {
		return nil, err
	}
	defer c.close()
	tracked := b.quick.Tracked
	untracked := b.quick.Untracked.Iter()
	more := untracked.Next()
	c.top = r.Top
	// cur gathers paths while prev's are stat'ed, then prev is compared
	// while cur's are.
	cur, prev := newSteadyBatch(), newSteadyBatch()
	defer func() { cur.wait(); prev.wait() }()
	turn := func() error {
		cur.start(r.Top, b.quick.Vouched)
		if err := prev.take(c); err != nil {
			return err
		}
		cur, prev = prev, cur
		return nil
	}
	// Tracked files in index order and untracked ones sorted: both in
	// byte order, merged.
	var last []byte
	for len(tracked) > 0 || more {
		if !more || len(tracked) > 0 && tracked[0] < untracked.PathString() {
			cur.block, tracked = append(cur.block, scan.Change{Path: tracked[0]}), tracked[1:]
		} else {
			cur.addUntracked(untracked.Path())
			more = untracked.Next()
		}
		p := cur.block[len(cur.block)-1].Path
		if last != nil && p <= string(last) {
			return nil, errNoCarry // listed twice, or out of order
		}
		last = append(last[:0], p...)
		if len(cur.block) == steadyBlock {
			if err := turn(); err != nil {
				return nil, err
			}
		}
	}
	if err := turn(); err != nil {
		return nil, err
	}
	if err := prev.take(c); err != nil {
		return nil, err
	}
	if b.quick.Vouched != nil {
		testhook.Counted("fsmonitor-vouched", c.vouched)
	}
	if err := c.end(r, b.memo); err != nil {
		return nil, err
	}
	if len(c.delta) == 0 && len(c.reverts) == 0 {
		// The memo's tree itself; its listing holds as it is.
		return fromMemo(r, b.memo, nil)
	}
	snap, err := takeCarried(ctx, r, b, c, "", lim)
	if err != nil {
		return nil, err
	}
	if len(snap.Skipped) > 0 || len(snap.Submodules) > 0 {
		return snap, nil
	}
	if listing := editListing(b, c); listing != nil {
		snap.memo = private.Memo{Tree: snap.Tree.String(), Skipped: snap.Skipped, Submodules: snap.Submodules,
			Base: b.tree.String(), Env: env}
		snap.listing = listing
	}
	return snap, nil
}

// editListing is the memo's listing with c's paths: the carried ones as
// they were, the delta with its new lstat, the reverted ones gone. Both
// listings are streamed, the memo's read again from its file and the new
// one written to a file beside it: neither is held whole.
func editListing(b *base, c *carried) *private.ListingWriter {
	rd, err := b.listings.OpenListing(b.memo)
	if err != nil {
		return nil
	}
	defer rd.Close()
	w, err := b.listings.CreateListing()
	if err != nil {
		return nil
	}
	d, v := 0, 0
	for rd.Next() {
		l := rd.Listed()
		for d < len(c.delta) && c.delta[d].Path < string(l.Path) {
			w.Add(c.delta[d].Path, &c.deltaStats[d], b.started)
			d++
		}
		switch {
		case d < len(c.delta) && c.delta[d].Path == string(l.Path):
			w.Add(c.delta[d].Path, &c.deltaStats[d], b.started)
			d++
		case v < len(c.reverts) && c.reverts[v] == string(l.Path):
			v++
		default:
			w.AddListed(l)
		}
	}
	for ; d < len(c.delta); d++ {
		w.Add(c.delta[d].Path, &c.deltaStats[d], b.started)
	}
	if rd.Err() != nil || v != len(c.reverts) {
		w.Abandon()
		return nil
	}
	return w
}

func isAttributes(p string) bool {
	return p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes")
}

// takeCarried builds the capture as the memo's tree with c's paths
// edited; errNoCarry or store.ErrNoTreePath send it to store every path.
// sig is the memo's key for this scan.
func takeCarried(ctx context.Context, r *repo.Repo, b *base, c *carried, sig string, lim Limits) (*Snapshot, error) {
	s := sortChanges(r.Top, nil, c.delta, c.deltaStats, nil, lim)
	if s.total > lim.MaxTotalBytes {
		// The carried files are stored already: only the delta is new.
		return nil, tooLargeError(s.written, s.total, lim)
	}
	if len(s.gitlinks) > 0 || len(s.skipped) > 0 {
		return nil, errNoCarry // nested repositories and skipped paths keep the recipe's way
	}
	if lim.Found != nil {
		lim.Found(len(s.updates)+len(s.additions), s.total)
	}
	// A path listed then and not now is as the base holds it.
	odb, err := r.Odb()
	if err != nil {
		return nil, err
	}
	defer odb.Free()
	known := make([]treeedit.Edit, 0, len(c.reverts))
	trees := store.NewTrees(odb, nil)
	for _, p := range c.reverts {
		mode, id, found, err := trees.EntryAt(*b.tree, p)
		switch {
		case err != nil || found && mode == 0o040000:
			return nil, errNoCarry
		case found:
			known = append(known, treeedit.Edit{Path: p, Mode: mode, ID: id})
		default:
			known = append(known, treeedit.Edit{Path: p})
		}
	}
	// A path removed that the memo's tree holds as a folder (a tracked
	// file replaced by one) is already gone there: the folder is the
	// listed files beneath it, carried or edited on their own, which a
	// removal of the folder would take with it.
	removes := s.removes[:0:0]
	for _, p := range s.removes {
		mode, _, found, err := trees.EntryAt(*c.tree, p)
		if err != nil {
			return nil, errNoCarry
		}
		if !found || mode != 0o040000 {
			removes = append(removes, p)
		}
	}
	s.removes = removes
	tree, held, spilled, err := editTree(ctx, r, c.tree, s, known)
	if err != nil {
		return nil, err
	}
	testhook.Counted("capture-carry-stored", len(s.updates)+len(s.additions))
	snap := &Snapshot{held: held, stored: spilled}
	for _, p := range s.updates {
		if s.modes[p] != 0 {
			snap.moved = append(snap.moved, p)
		}
	}
	snap.moved = append(snap.moved, c.tracked...)
	snap.movedBytes = s.trackedBytes + c.trackedBytes
	return finish(ctx, r, snap, tree, sig, s.gitlinks, nil, s.modified)
}

// keepListing gives snap the listing of this scan, for the next one's
// carry, when b can keep one and the capture needed nothing the carry
// leaves to the recipe. order is sortedOrder(changes).
func keepListing(b *base, snap *Snapshot, env string, changes []scan.Change, stats []scan.Stat, order []int32) {
	if !b.listable() || order == nil || len(snap.Skipped) > 0 || len(snap.Submodules) > 0 {
		return
	}
	w := private.NewListingWriter(len(changes))
	for _, i := range order {
		if changes[i].Submodule != "" {
			return
		}
		w.Add(changes[i].Path, &stats[i], b.started)
	}
	if w.Bytes() == nil {
		return
	}
	if snap.memo.Tree == "" {
		snap.memo = private.Memo{Tree: snap.Tree.String(), Skipped: snap.Skipped, Submodules: snap.Submodules}
	}
	snap.memo.Base, snap.memo.Env = b.tree.String(), env
	snap.listing = w
}
