// Package private keeps a capture's private index: git-venom's own stat
// cache of one tree, kept between captures, with the memo of what its last
// scan gave. A copy of the user's index (copy.go) is what it is made from,
// and what a capture falls back to without it.
package private

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// The private index is git-venom's own stat cache of one tree, in the
// state folder: a copy of the user's index (made again when that changes)
// refreshed by each capture's git status, untracked cache included. Its
// entries stay the user's index's (only stat data moves), so ignore rules
// apply as for the user's git status; its tree is the base a capture
// edits. When anything about it is doubtful, it is thrown away.

// Pins turn on the untracked cache for -uall scans of the private
// index only (git 2.39 keeps it for "all" when the config asks for it).
var Pins = []string{
	"-c", "core.untrackedCache=true",
	"-c", "status.showUntrackedFiles=all",
}

// ErrUnusable sends a capture to a copy of the user's index.
var ErrUnusable = errors.New("private index unusable")

// format changes whenever what a private index means changes; one of
// another format is made again.
const format = 2

// Index is the private index of one tree, held exclusively.
type Index struct {
	index string
	meta  string
	lockf *os.File
	// saved is the metadata file's content as last read or written, nil
	// when there is none: a save of the same bytes writes nothing.
	saved []byte
}

// metadata says which user index the private index was made from, and
// what it last gave.
type metadata struct {
	Format int    `json:"format"`
	User   string `json:"user"`
	// Tree is the tree of the private index's content (the user's, at
	// seed), or "" when it has none (unmerged entries).
	Tree    string           `json:"tree"`
	Content string           `json:"content"`
	Flagged []gitindex.Entry `json:"flagged"`
	Memo    Memo             `json:"memo"`
	// GitDir is the git dir of the worktree the index serves: once it is
	// gone, so is the worktree, and ForgetGone removes the index.
	GitDir string `json:"git_dir,omitempty"`
}

// Open locks the tree's private index, or returns nil when another
// process has it (that capture then works from a copy).
func Open(r *repo.Repo) *Index {
	dir := filepath.Join(r.StateDir, "index")
	if r.StateDir == "" {
		return nil
	}
	sum := sha1.Sum([]byte(r.Top + "\x00" + r.GitDir + "\x00" + r.Index))
	key := hex.EncodeToString(sum[:8])
	// A link, FIFO or device at the lock (or a link for index/) makes the
	// private index unusable: the capture goes on from a copy.
	f, err := statefile.Open(filepath.Join(dir, key+".lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	p := &Index{index: filepath.Join(dir, key+".index"), meta: filepath.Join(dir, key+".json"), lockf: f}
	// A git process killed mid-write leaves index.lock behind; we hold the
	// private index exclusively, so it is stale.
	_ = statefile.Remove(p.index + ".lock")
	return p
}

// Close lets another process have the private index. The flock is the
// open file's, which a program another goroutine is starting shares until
// it execs: without the unlock, a capture right after ours would find the
// index taken and fall back to a copy, whose git writes loose objects.
func (p *Index) Close() {
	_ = syscall.Flock(int(p.lockf.Fd()), syscall.LOCK_UN)
	_ = p.lockf.Close()
}

// Discard throws the private index away.
func (p *Index) Discard() {
	_ = statefile.Remove(p.index)
	_ = statefile.Remove(p.meta)
	p.saved = nil
	_ = statefile.Remove(p.listingFile())
	p.Quick().Drop()
}

// Forget throws r's private index away, with its memo, listing and scan
// record, unless another process has it (that one's capture then works
// from a copy, and so does ours). Their object ids are trusted for every
// file whose stat data they hold: once one of those objects is gone (a
// person's git gc --prune=now deleted it before a ref reached it), every
// capture through them would name it again.
func Forget(r *repo.Repo) {
	if p := Open(r); p != nil {
		p.Discard()
		p.Close()
	}
}

// Quick is the quick scan of the private index, with its record beside it.
func (p *Index) Quick() scan.Quick {
	return scan.Quick{Index: p.index, Record: strings.TrimSuffix(p.index, ".index") + ".scan"}
}

// Ready is a private index made ready for one capture.
type Ready struct {
	// Index is the private index file; git's stat data in it is the
	// capture's to refresh, its content only MoveOn's to change.
	Index string
	// Flagged are the user's index entries captures treat specially.
	Flagged []gitindex.Entry
	// Tree is the tree of the index's content, nil when it has none: the
	// capture then takes the index way.
	Tree *git.Oid
	// Memo is what the last scan of this index gave.
	Memo Memo
	meta metadata
}

// Ready makes the private index ready for a capture: made again from the
// user's index when that changed since, else as the last capture left it.
// ErrUnusable: the capture starts from a copy instead.
func (p *Index) Ready(ctx context.Context, r *repo.Repo, tmpDir string) (*Ready, error) {
	user, err := userIndexSig(r.Index)
	if err != nil {
		return nil, ErrUnusable
	}
	m, ok := p.load()
	if ok && m.User != user && m.Content != "" {
		// git rewrites its index when it only refreshed stat data (a
		// git status does); the private index holds as long as the files
		// the user's index records are the same.
		if ix, err := gitindex.Read(r.Index); err == nil && ix.Content == m.Content {
			m.User = user
		}
	}
	if !ok || m.User != user || m.Format != format {
		p.Discard()
		if m, err = p.seed(ctx, r, tmpDir, user); err != nil {
			p.Discard()
			if ctx.Err() != nil {
				return nil, store.Failed("seed", ctx.Err())
			}
			return nil, ErrUnusable
		}
	}
	// The memo stays on disk through the scan: it is keyed by all that
	// decides its tree but the index's content, which only MoveOn changes,
	// and MoveOn takes the metadata away first. A capture killed before
	// Remember leaves a memo that still holds.
	m.GitDir = r.GitDir
	if err := p.save(m); err != nil {
		p.Discard()
		return nil, ErrUnusable
	}
	rd := &Ready{Index: p.index, Flagged: m.Flagged, Memo: m.Memo, meta: m}
	if m.Tree != "" {
		if rd.Tree, err = git.NewOid(m.Tree); err != nil {
			p.Discard()
			return nil, ErrUnusable
		}
	}
	return rd, nil
}

// Remember keeps what this capture's scan gave, for the next one, with
// listing, the memo's listing, when the scan made one (nil: m.Listing
// names the one kept already, or none).
func (p *Index) Remember(rd *Ready, m Memo, listing *ListingWriter) {
	switch {
	case listing == nil:
	case listing.f != nil:
		m.Listing = ""
		if sum, err := listing.finish(); err == nil {
			if statefile.Rename(listing.tmp, p.listingFile()) == nil {
				m.Listing = sum
			} else {
				_ = statefile.Remove(listing.tmp)
			}
		}
	default:
		m.Listing = ""
		if data := listing.Bytes(); data != nil && statefile.WriteAtomic(p.listingFile(), data, 0o666) == nil {
			m.Listing = listingSum(data)
		}
	}
	rd.meta.Memo = m
	_ = p.save(rd.meta)
}

// MoveOn brings the private index's tracked files up to the tree just
// captured once the files that differ from it (moved, movedBytes), read
// and hashed again at every capture, come to more than twice the index,
// which moving on reads and writes twice. Membership stays the user's; a
// failure throws the index away. store writes the capture's held objects.
func (p *Index) MoveOn(ctx context.Context, r *repo.Repo, rd *Ready, moved []string, movedBytes int64, store func() error) {
	m := rd.meta
	fi, err := os.Stat(p.index)
	if err != nil || len(moved) == 0 || movedBytes <= 2*fi.Size() {
		return
	}
	// update-index writes the blobs it does not find: the capture's held
	// objects go to disk first, or they would also be written loose.
	if store() != nil {
		return
	}
	moves++
	// The metadata goes first: killed between update-index and its save,
	// it would name the old tree as the base of the new content, and the
	// next capture would put the old content back in every file that no
	// longer differs from the index. Without it the index is made again.
	if statefile.Remove(p.meta) != nil {
		p.Discard()
		return
	}
	p.saved = nil
	env := []string{"GIT_INDEX_FILE=" + p.index}
	c := gitcli.Call{Env: env, Pins: Pins, Stdin: bytes.NewReader(gitcli.NulList(moved))}
	if _, err := r.Git.RunCall(ctx, c, "update-index", "-z", "--add", "--replace", "--stdin"); err != nil {
		p.Discard()
		return
	}
	if testhook.PointIn(ctx, "private-moved-on") != nil {
		p.Discard()
		return
	}
	// The base is what the index now holds, whatever the files held when
	// update-index read them.
	out, err := r.Git.RunCall(ctx, gitcli.Call{Env: env, Pins: Pins}, "write-tree")
	if err != nil {
		p.Discard()
		return
	}
	m.Tree = strings.TrimSpace(string(out))
	m.Memo = Memo{}
	if p.save(m) != nil {
		p.Discard()
	}
}

// moves counts the times a private index moved on, for tests.
var moves int

// seeds counts the private indexes made, for tests.
var seeds int

// seed makes the private index from the user's.
func (p *Index) seed(ctx context.Context, r *repo.Repo, tmpDir, user string) (metadata, error) {
	seeds++
	tmp, err := CopyIndex(r.Index, tmpDir)
	if err != nil {
		return metadata{}, err
	}
	defer statefile.Remove(tmp)
	// The digest of what the user's index records, read from the copy so
	// that it describes exactly the index the private one starts from.
	content := ""
	if ix, err := gitindex.Read(tmp); err == nil {
		content = ix.Content
	}
	flagged, err := PrepareCopy(ctx, r, tmp)
	if err != nil {
		return metadata{}, err
	}
	if _, err := os.Lstat(tmp); errors.Is(err, os.ErrNotExist) {
		// No user index yet (no commit): the private index starts empty.
		if err := statefile.WriteAtomic(tmp, emptyIndex(), 0o666); err != nil {
			return metadata{}, err
		}
	}
	// The tree of what the index holds: the base every capture edits. An
	// index with unmerged entries has none; its captures take the index way.
	tree := ""
	out, err := r.Git.RunCall(ctx, gitcli.Call{Env: []string{"GIT_INDEX_FILE=" + tmp}}, "write-tree")
	if err == nil {
		tree = strings.TrimSpace(string(out))
	} else if ctx.Err() != nil {
		return metadata{}, err
	}
	if err := statefile.Rename(tmp, p.index); err != nil {
		return metadata{}, err
	}
	return metadata{Format: format, User: user, Tree: tree, Content: content, Flagged: flagged}, nil
}

func (p *Index) load() (metadata, bool) {
	var m metadata
	b, err := statefile.ReadFile(p.meta)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	if _, err := os.Stat(p.index); err != nil {
		return m, false
	}
	p.saved = b
	return m, true
}

// save writes m as the metadata, unless the file holds it already: a
// capture that changed nothing about the index writes nothing.
func (p *Index) save(m metadata) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if p.saved != nil && bytes.Equal(b, p.saved) {
		return nil
	}
	p.saved = nil
	if err := statefile.WriteAtomic(p.meta, b, 0o666); err != nil {
		return err
	}
	p.saved = b
	return nil
}

// ForgetGone removes the private indexes of worktrees whose git dir is
// gone (a linked worktree that git worktree remove or prune took away): a
// private index is as large as the user's, and nothing else would ever
// remove it. One whose lock another process holds is left alone. It
// returns how many it removed.
func ForgetGone(stateDir string) int {
	metas, _ := filepath.Glob(filepath.Join(stateDir, "index", "*.json"))
	removed := 0
	for _, meta := range metas {
		b, err := statefile.ReadFile(meta)
		var m metadata
		if err != nil || json.Unmarshal(b, &m) != nil || m.GitDir == "" {
			continue
		}
		if _, err := os.Stat(m.GitDir); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		key := strings.TrimSuffix(meta, ".json")
		f, err := statefile.Open(key+".lock", os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			(&Index{index: key + ".index", meta: meta}).Discard()
			statefile.Remove(key + ".lock")
			removed++
		}
		f.Close()
	}
	return removed
}

// userIndexSig identifies one version of the user's index: git replaces
// the file by rename on every write, and its last 20 bytes are the checksum
// of its content.
func userIndexSig(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	var sum [20]byte
	if fi.Size() >= 20 {
		if _, err := f.ReadAt(sum[:], fi.Size()-20); err != nil && err != io.EOF {
			return "", err
		}
	}
	var ino uint64
	var ctime int64
	if st != nil {
		ino, ctime = st.Ino, st.Ctim.Nano()
	}
	return fmt.Sprintf("%s:%d:%d:%d:%d:%x", path, fi.Size(), fi.ModTime().UnixNano(), ino, ctime, sum), nil
}

// emptyIndex is a valid index file with no entries.
func emptyIndex() []byte {
	b := []byte{'D', 'I', 'R', 'C', 0, 0, 0, 2, 0, 0, 0, 0}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}
