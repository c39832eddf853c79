package capture

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

	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
)

// The private index is git-venom's own stat cache of one tree, kept in the
// state directory between captures. It starts as a copy of the user's index
// (re-made whenever that index changes) and is then refreshed by every
// capture's git status, which also keeps git's untracked cache in it: safe
// here because the index is ours, and it spares reading every directory
// again. Its entries are always the user's index's (only their stat data
// moves on), so ignore rules apply afresh at every capture exactly as for the
// user's git status, and its tree, written once when it is made, is the base
// that a capture edits with what status lists (build.go). When anything
// about it is doubtful it is thrown away and the capture starts from a copy.

// privatePins turn on the untracked cache for -uall scans of the private
// index only (git 2.39 keeps it for "all" when the config asks for it).
var privatePins = []string{
	"-c", "core.untrackedCache=true",
	"-c", "status.showUntrackedFiles=all",
}

var errPrivateUnusable = errors.New("private index unusable")

// privateFormat changes whenever what a private index means changes; one of
// another format is made again.
const privateFormat = 2

// private is the private index of one tree, held exclusively.
type private struct {
	index string
	meta  string
	lockf *os.File
}

// privateMeta says which user index the private index was made from, and
// what it last gave.
type privateMeta struct {
	Format int    `json:"format"`
	User   string `json:"user"`
	// Tree is the tree of the private index's content (the user's, at
	// seed), or "" when it has none (unmerged entries).
	Tree    string           `json:"tree"`
	Content string           `json:"content"`
	Flagged []gitindex.Entry `json:"flagged"`
	Memo    memo             `json:"memo"`
	// GitDir is the git dir of the worktree the index serves: once it is
	// gone, so is the worktree, and ForgetGone removes the index.
	GitDir string `json:"git_dir,omitempty"`
}

// openPrivate locks the tree's private index, or returns nil when another
// process has it (that capture then works from a copy).
func openPrivate(r *repo.Repo) *private {
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
	p := &private{index: filepath.Join(dir, key+".index"), meta: filepath.Join(dir, key+".json"), lockf: f}
	// A git process killed mid-write leaves index.lock behind; we hold the
	// private index exclusively, so it is stale.
	_ = statefile.Remove(p.index + ".lock")
	return p
}

func (p *private) close() {
	_ = p.lockf.Close()
}

// discard throws the private index away.
func (p *private) discard() {
	_ = statefile.Remove(p.index)
	_ = statefile.Remove(p.meta)
	p.dropRecord()
}

// take captures through the private index, making it first when the user's
// index changed since.
func (p *private) take(ctx context.Context, r *repo.Repo, tmpDir string, lim Limits) (*Snapshot, error) {
	user, err := userIndexSig(r.Index)
	if err != nil {
		return nil, errPrivateUnusable
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
	if !ok || m.User != user || m.Format != privateFormat {
		p.discard()
		if m, err = p.seed(ctx, r, tmpDir, user); err != nil {
			p.discard()
			if ctx.Err() != nil {
				return nil, gitFailure("seed", ctx.Err())
			}
			return nil, errPrivateUnusable
		}
	}
	// The memo holds only until the index's content moves on.
	known := m.Memo
	m.Memo = memo{}
	m.GitDir = r.GitDir
	if err := p.save(m); err != nil {
		p.discard()
		return nil, errPrivateUnusable
	}
	b := base{idx: p.index, flagged: m.Flagged, persistent: true, memo: known, pins: privatePins,
		settings: settingsFiles(r)}
	if m.Tree != "" {
		if b.tree, err = git.NewOid(m.Tree); err != nil {
			p.discard()
			return nil, errPrivateUnusable
		}
	}
	rec := p.loadRecord()
	if rec != nil && rec.Dirs != nil {
		q, drop, err := p.quickScan(r, rec, b.settings)
		if drop {
			p.dropRecord()
			rec = nil
		}
		if err == nil {
			b.quick = q
		}
	}
	snap, err := scan(ctx, r, b, tmpDir, lim)
	if err != nil {
		// A failed git call may have left the index half-way; it is only a
		// cache, so it goes.
		p.discard()
		return nil, err
	}
	switch {
	case b.quick != nil && b.quick.record != nil:
		p.saveRecord(b.quick.record)
	case b.quick == nil && (rec == nil || rec.Dirs == nil):
		p.makeRecord(ctx, r, rec, snap.untracked, b.settings)
	}
	if snap.memo.Sig != "" {
		m.Memo = snap.memo
		_ = p.save(m)
	}
	p.moveOn(ctx, r, m, snap)
	return snap, nil
}

// moveOn brings the private index's tracked files up to the tree just
// captured, when that is cheaper than what they cost every capture now:
// git status reads again each file whose content differs from the index,
// and the capture hashes it again. Moving on costs two reads and writes of
// the index (update-index, then write-tree for the new base), so it is done
// once those files come to more bytes than twice the index. Membership
// stays the user's: only content moves. A failure throws the index away.
func (p *private) moveOn(ctx context.Context, r *repo.Repo, m privateMeta, snap *Snapshot) {
	fi, err := os.Stat(p.index)
	if err != nil || len(snap.moved) == 0 || snap.movedBytes <= 2*fi.Size() {
		return
	}
	// update-index writes the blobs it does not find: the capture's held
	// objects go to disk first, or they would also be written loose.
	if snap.Store(r) != nil {
		return
	}
	moves++
	env := []string{"GIT_INDEX_FILE=" + p.index}
	c := gitcli.Call{Env: env, Pins: privatePins, Stdin: bytes.NewReader(nulJoin(snap.moved))}
	if _, err := r.Git.RunCall(ctx, c, "update-index", "-z", "--add", "--replace", "--stdin"); err != nil {
		p.discard()
		return
	}
	// The base is what the index now holds, whatever the files held when
	// update-index read them.
	out, err := r.Git.RunCall(ctx, gitcli.Call{Env: env, Pins: privatePins}, "write-tree")
	if err != nil {
		p.discard()
		return
	}
	m.Tree = strings.TrimSpace(string(out))
	m.Memo = memo{}
	if p.save(m) != nil {
		p.discard()
	}
}

// moves counts the times a private index moved on, for tests.
var moves int

// seeds counts the private indexes made, for tests.
var seeds int

// seed makes the private index from the user's.
func (p *private) seed(ctx context.Context, r *repo.Repo, tmpDir, user string) (privateMeta, error) {
	seeds++
	tmp, err := copyIndex(r.Index, tmpDir)
	if err != nil {
		return privateMeta{}, err
	}
	defer statefile.Remove(tmp)
	// The digest of what the user's index records, read from the copy so
	// that it describes exactly the index the private one starts from.
	content := ""
	if ix, err := gitindex.Read(tmp); err == nil {
		content = ix.Content
	}
	flagged, err := prepareCopy(ctx, r, tmp)
	if err != nil {
		return privateMeta{}, err
	}
	if _, err := os.Lstat(tmp); errors.Is(err, os.ErrNotExist) {
		// No user index yet (no commit): the private index starts empty.
		if err := statefile.WriteAtomic(tmp, emptyIndex(), 0o666); err != nil {
			return privateMeta{}, err
		}
	}
	// The tree of what the index holds: the base every capture edits. An
	// index with unmerged entries has none; its captures take the index way.
	tree := ""
	out, err := r.Git.RunCall(ctx, gitcli.Call{Env: []string{"GIT_INDEX_FILE=" + tmp}}, "write-tree")
	if err == nil {
		tree = strings.TrimSpace(string(out))
	} else if ctx.Err() != nil {
		return privateMeta{}, err
	}
	if err := statefile.Rename(tmp, p.index); err != nil {
		return privateMeta{}, err
	}
	return privateMeta{Format: privateFormat, User: user, Tree: tree, Content: content, Flagged: flagged}, nil
}

func (p *private) load() (privateMeta, bool) {
	var m privateMeta
	b, err := statefile.ReadFile(p.meta)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return m, false
	}
	if _, err := os.Stat(p.index); err != nil {
		return m, false
	}
	return m, true
}

func (p *private) save(m privateMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return statefile.WriteAtomic(p.meta, b, 0o666)
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
		var m privateMeta
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
			(&private{index: key + ".index", meta: meta}).discard()
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
