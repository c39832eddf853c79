package private

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"syscall"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treeedit"
	"github.com/git-venom/git-venom/lib/treepath"
)

// Written is a file a rollback has just placed in the tree: the object
// it was checked out from, and the file's stat data right after, when it
// was still exactly what was written (treepath.Placed.Same).
type Written struct {
	Path string
	Mode uint32 // 0o100644 or 0o100755
	Oid  string
	Stat gitindex.Stat
	// Direct: the writer put the blob's bytes in the file itself, having
	// checked that no attribute or core.autocrlf converts them on the way
	// out (store.NewNoSmudge); git stores such a file as it is
	// (docs/checkpoints.md#files-stored-as-they-are), so NoteWritten does not
	// read the blob.
	Direct bool
}

// NoteWritten tells the tree's private index that files were just written
// from known objects, as git checkout records what it writes, so the next
// capture finds them clean by stat data rather than hashing them; a file
// touched since has other stat data, or is racy, and is read. Anything
// doubtful (no private index, another holder, the user's index changed, a
// flagged entry) leaves the index be: a capture is right without it.
func NoteWritten(r *repo.Repo, files []Written, known Known) (noted int) {
	if len(files) == 0 {
		return 0
	}
	p := Open(r)
	if p == nil {
		return 0
	}
	defer p.Close()
	n, err := p.noteWritten(r, files, known)
	if err != nil {
		// Half done, the index and its tree might disagree: it goes.
		p.Discard()
		return 0
	}
	return n
}

// Known is a tree the caller has made already from the tree Base: Changes
// are the paths where Tree differs from Base, each with both entries (a
// rollback's expected tree, S with its plan's changes made). When the
// private index's tree is Base and every file noted is one of Changes, set
// to the entry Tree holds, the index's new tree is Tree with the changes
// not noted put back to Base's entries: a few paths to edit where there
// were all of them.
type Known struct {
	Base, Tree *git.Oid
	Changes    []KnownChange
}

// KnownChange is one path Known's trees differ at: Base's entry there and
// Tree's (mode 0: none).
type KnownChange struct {
	Path               string
	BaseMode, TreeMode uint32
	BaseID, TreeID     git.Oid
}

// back returns the edits that make, from k.Tree, the tree base with edits
// made, and whether it can: base is k.Base and each edit is one of
// k.Changes as Tree holds it.
func (k Known) back(base string, edits []treeedit.Edit) ([]treeedit.Edit, bool) {
	if k.Base == nil || k.Tree == nil || k.Base.String() != base || len(edits) > len(k.Changes) {
		return nil, false
	}
	at := make(map[string]int, len(k.Changes))
	for i := range k.Changes {
		at[k.Changes[i].Path] = i
	}
	noted := make([]bool, len(k.Changes))
	for _, e := range edits {
		i, ok := at[e.Path]
		if !ok || noted[i] {
			return nil, false
		}
		c := &k.Changes[i]
		if id, err := git.NewOid(e.Oid); err != nil || c.TreeMode != e.Mode || !c.TreeID.Equal(id) {
			return nil, false
		}
		noted[i] = true
	}
	var back []treeedit.Edit
	for i := range k.Changes {
		if c := &k.Changes[i]; !noted[i] {
			back = append(back, treeedit.Edit{Path: c.Path, Mode: c.BaseMode, ID: c.BaseID})
		}
	}
	return back, true
}

func (p *Index) noteWritten(r *repo.Repo, files []Written, known Known) (int, error) {
	m, ok := p.load()
	user, err := userIndexSig(r.Index)
	if !ok || err != nil || m.Format != format || m.User != user || m.Tree == "" {
		return 0, nil
	}
	// The lock is held: nothing else writes the index meanwhile. It is
	// mapped, not read: the patched index is written from the mapping
	// (gitindex.Stats.WritePatched), never held whole.
	stats, err := gitindex.ReadStats(p.index)
	if err != nil {
		return 0, nil
	}
	defer stats.Close()
	if stats.Flagged {
		return 0, nil
	}
	lib, err := r.Lib()
	if err != nil {
		return 0, nil
	}
	odb, err := lib.Odb()
	if err != nil {
		return 0, nil
	}
	defer odb.Free()
	nc := store.NewNoConversion(r)
	// Find and Path read the mapped index: under its guard, the loop as a
	// whole (a guard per file would cost more than the lookup).
	var updates map[int]gitindex.Update
	var edits []treeedit.Edit
	var noted map[string]gitindex.Update
	if err := stats.Guard(func() { updates, edits, noted = updatesFor(r.Top, stats, odb, nc, files) }); err != nil {
		return 0, err
	}
	if len(edits) == 0 {
		return 0, nil
	}
	if len(updates) != len(edits) {
		return 0, nil // a path twice: which stat data holds is not known
	}
	// The new tree: base with the edits, or the known tree with the
	// changes not noted put back.
	share := func(id *git.Oid) { _ = r.ShareObject(id.String()) }
	tree, todo := known.Tree, edits
	if back, ok := known.back(m.Tree, edits); ok {
		testhook.Counted("noted-known-back", len(back))
		todo = back
	} else if tree, err = git.NewOid(m.Tree); err != nil {
		return 0, nil
	}
	if len(todo) > 0 {
		if tree, err = treeedit.ApplyNoting(lib, lib, tree, todo, share); err != nil {
			return 0, nil
		}
	}
	// The meta first says the index has no tree (captures then take the
	// index way), then the index moves, then the meta names its new tree:
	// a crash in between never pairs an index with a tree it does not hold.
	m.Tree, m.Memo = "", Memo{}
	if err := p.save(m); err != nil {
		return 0, err
	}
	n := 0
	err = statefile.WriteAtomicFrom(p.index, 0o666, func(w io.Writer) error {
		b := bufio.NewWriterSize(w, 256<<10)
		var err error
		if n, err = stats.WritePatched(b, updates, stats.Mtime); err != nil {
			return err
		}
		return b.Flush()
	})
	if err == nil && n != len(edits) {
		err = fmt.Errorf("%d of %d entries patched", n, len(edits))
	}
	if err != nil {
		return 0, err
	}
	// A noted file written again between its check (updatesFor) and the
	// index's rename, in the second of its noted mtime, would pass for it
	// once the index is in a later second: each is checked once more, and
	// the index goes if one moved. A change after this check falls in the
	// index's second or later: racy for git, or other stat data.
	if err := testhook.Point("rollback-noted"); err != nil {
		return 0, err
	}
	for _, e := range edits {
		if u := noted[e.Path]; !stillPlaced(treepath.Abs(r.Top, e.Path), &u.Stat) {
			return 0, fmt.Errorf("%s was written again while noted", e.Path)
		}
	}
	m.Tree = tree.String()
	if err := p.save(m); err != nil {
		return 0, err
	}
	return n, nil
}

// updatesFor is the index update and the tree edit of each file of files
// that the index tracks, that reads back as its blob (readsBack) and whose
// stat data is still, to the nanosecond, what was taken right after it was
// placed: a file written again since, in the same second, would keep stat
// data git (comparing whole seconds) takes for the noted one, and the
// index is written after. Such a file keeps its entry, smudged when racy
// (lib/racy). noted holds each update by its path.
func updatesFor(top string, stats *gitindex.Stats, odb *git.Odb, nc *store.NoConversion, files []Written) (updates map[int]gitindex.Update, edits []treeedit.Edit, noted map[string]gitindex.Update) {
	updates = make(map[int]gitindex.Update, len(files))
	noted = make(map[string]gitindex.Update, len(files))
	for _, f := range files {
		if f.Mode != 0o100644 && f.Mode != 0o100755 || !readsBack(odb, nc, f) {
			continue
		}
		i := stats.Find([]byte(f.Path))
		if i >= stats.Len() || string(stats.Path(i)) != f.Path {
			continue // untracked: the index's membership stays the user's
		}
		raw, err := hex.DecodeString(f.Oid)
		if err != nil || len(raw) != 20 {
			continue
		}
		u := gitindex.Update{Stat: f.Stat}
		u.Stat.Mode = f.Mode
		if !stillPlaced(treepath.Abs(top, f.Path), &u.Stat) {
			continue
		}
		copy(u.Oid[:], raw)
		updates[i] = u
		noted[f.Path] = u
		edits = append(edits, treeedit.Edit{Path: f.Path, Mode: f.Mode, Oid: f.Oid})
	}
	return updates, edits, noted
}

// stillPlaced says whether the file at path has, to the nanosecond, the
// stat data st taken right after it was placed.
func stillPlaced(path string, st *gitindex.Stat) bool {
	var now syscall.Stat_t
	return syscall.Lstat(path, &now) == nil && scan.SameStat(st, &now) && uint32(now.Dev) == st.Dev
}

// readsBack reports whether git, reading f's file again, would store f's
// own blob. A Direct file does; one checkout-index wrote through the
// conversions does only when nothing could filter it (store.NoConversion),
// its blob has no CR and the file's size, and it is at most
// store.MemoryFileBytes. Others are read by the capture as any file is.
func readsBack(odb *git.Odb, nc *store.NoConversion, f Written) bool {
	if f.Direct {
		return true
	}
	if !nc.AttributesQuiet(f.Path) {
		return false
	}
	id, err := git.NewOid(f.Oid)
	if err != nil {
		return false
	}
	// The size first, from the object's header: a blob of another size
	// cannot be the file, and a big one is not read whole into memory
	// here (git streamed it to the file; the capture streams it back).
	size, typ, err := odb.ReadHeader(id)
	if err != nil || typ != git.ObjectBlob || size != uint64(f.Stat.Size) || size > store.MemoryFileBytes {
		return false
	}
	obj, err := odb.Read(id)
	if err != nil {
		return false
	}
	defer obj.Free()
	data := obj.Data()
	return obj.Type() == git.ObjectBlob && uint64(len(data)) == uint64(f.Stat.Size) && bytes.IndexByte(data, '\r') < 0
}
