// Package capture turns the state of one tree into git objects: the docs/checkpoints.md#how-a-capture-runs
// recipe, done as one scan. It starts from a copy of the user's index (the
// stat cache spares hashing the tree), lets git's own status find what
// changed, stages only those paths into the copy and writes the tree. The
// user's index, HEAD, branches and working files are never written.
package capture

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	git "github.com/libgit2/git2go/v34"
	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/paths"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treepath"
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
}

// LimitsOf is the limits the settings give.
func LimitsOf(c config.Config) Limits {
	return Limits{MaxFileBytes: c.MaxFileBytes, MaxTotalBytes: c.MaxTotalBytes, Exclude: c.Exclude}
}

// Snapshot is a captured tree, before any commit exists for it.
type Snapshot struct {
	Tree       *git.Oid
	Head       *git.Oid // nil on an unborn HEAD
	Branch     string   // short name; "" when detached
	Skipped    []journal.Skipped
	Submodules []journal.Submodule
	// memo lets the next scan of a private index reuse this one.
	memo memo
	// moved are the tracked files whose content differs from the private
	// index's, and movedBytes their size, when the tree path built the tree.
	moved      []string
	movedBytes int64
	// untracked are the untracked paths git status listed (none when the
	// quick scan stood for it).
	untracked []string
	// held are the new objects of the tree, not on disk yet (TakeHeld).
	held []Object
}

// Store writes the snapshot's new objects and extra (the checkpoint's
// commit) to the repository as one pack, recorded as git-venom's. Without
// anything to write it does nothing.
func (s *Snapshot) Store(r *repo.Repo, extra ...Object) error {
	objs := append(s.held[:len(s.held):len(s.held)], extra...)
	if err := writePack(r, objs); err != nil {
		return gitFailure("write-pack", err)
	}
	s.held = nil
	return nil
}

// HeadString is Head as the log writes it: a hex id or null.
func (s *Snapshot) HeadString() *string {
	if s.Head == nil {
		return nil
	}
	h := s.Head.String()
	return &h
}

// change is one path git status reported as different from the index.
type change struct {
	path      string
	untracked bool
	submodule string // porcelain v2 "S<c><m><u>" field, or ""
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
	memo memo
	// quick, when set, stands for git status: what the quick scan found.
	quick *quickResult
	// settings are git's files outside the tree (settingsFiles), listed
	// once per capture for the memo's key and the quick scan's.
	settings []string
	// pins are extra -c flags for every git call on idx.
	pins []string
	// tree is the tree of idx's content, when known (private index only):
	// the capture is then built on it without an index write.
	tree *git.Oid
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
	if p := openPrivate(r); p != nil {
		defer p.close()
		snap, err := p.take(ctx, r, tmpDir, lim)
		if err == nil || !errors.Is(err, errPrivateUnusable) {
			return snap, err
		}
		// The private index could not be used: start again from a copy.
	}
	idx, err := copyIndex(r.Index, tmpDir)
	if err != nil {
		return nil, gitFailure("copy_index", err)
	}
	defer statefile.Remove(idx)
	flagged, err := prepareCopy(ctx, r, idx)
	if err != nil {
		return nil, err
	}
	return scan(ctx, r, base{idx: idx, flagged: flagged}, tmpDir, lim)
}

// prepareCopy reads the flagged entries of an index copy and clears its
// assume-unchanged bits (docs/checkpoints.md#how-a-capture-runs step 2: in the copy only, so those edits
// are seen; libgit2 honours the bit and would hide them).
func prepareCopy(ctx context.Context, r *repo.Repo, idx string) ([]gitindex.Entry, error) {
	env := []string{"GIT_INDEX_FILE=" + idx}
	flagged, err := readFlags(ctx, r, idx, env)
	if err != nil {
		return nil, err
	}
	var assumed, keep []gitindex.Entry
	for _, e := range flagged {
		if e.AssumeValid && !e.SkipWorktree {
			assumed = append(assumed, e)
		}
		if e.SkipWorktree || e.SparseDir || e.Mode == 0o160000 {
			keep = append(keep, e)
		}
	}
	if len(assumed) > 0 {
		_, err := r.Git.RunCall(ctx, gitcli.Call{Env: env, Stdin: bytes.NewReader(nulJoin(pathsOf(assumed)))},
			"update-index", "-z", "--no-assume-unchanged", "--stdin")
		if err != nil {
			return nil, gitFailure("update-index", err)
		}
	}
	return keep, nil
}

// scan is docs/checkpoints.md#how-a-capture-runs steps 3 and 4 as one scan: git status lists every
// difference from the index, and only those paths are staged.
func scan(ctx context.Context, r *repo.Repo, b base, tmpDir string, lim Limits) (*Snapshot, error) {
	on := func(idx string, stdin []byte, args ...string) ([]byte, error) {
		c := gitcli.Call{Env: []string{"GIT_INDEX_FILE=" + idx}, Pins: b.pins}
		if stdin != nil {
			c.Stdin = bytes.NewReader(stdin)
		}
		return r.Git.RunCall(ctx, c, args...)
	}
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

	// Submodules: only their commits. Asking status whether they are dirty
	// would run git status in each, which rewrites their own index, the
	// user's; listGitlinks asks without optional locks instead.
	var out []byte
	var changes []change
	if b.quick != nil {
		out, changes = b.quick.status, b.quick.changes
	} else {
		if err := testhook.Point("capture-status"); err != nil {
			return nil, gitFailure("status", err)
		}
		var err error
		out, err = on(b.idx, nil, "status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files=all",
			"--ignore-submodules=dirty")
		if err != nil {
			return nil, gitFailure("status", err)
		}
		if changes, err = parseStatus(out); err != nil {
			return nil, gitFailure("status", err)
		}
		for _, c := range changes {
			if c.untracked {
				snap.untracked = append(snap.untracked, c.path)
			}
		}
	}
	if err := testhook.Point("capture-scan"); err != nil {
		return nil, gitFailure("status", err)
	}
	// Each listed path is looked at once (lstat), for the memo's key and
	// for sorting it: a skipped file costs that and nothing more.
	stats := lstatAll(r.Top, changes)
	var sig string
	// A submodule's dirtiness is not in status's output: no memo then.
	if b.persistent && len(userLinks) == 0 {
		sig = scanSignature(b.settings, out, changes, stats, lim)
		if sig != "" && sig == b.memo.Sig {
			if snap, err := b.memo.snapshot(r); err == nil {
				snap.memo = b.memo
				return snap, nil
			}
		}
	}

	// Sort what changed into content updates of paths the index holds,
	// files the index does not hold, and paths that are gone.
	var updates, additions, removes []string
	var written []sizedFile
	var total int64
	gitlinks := map[string]bool{}
	for p := range userLinks {
		gitlinks[p] = true
	}
	modified := map[string]bool{}
	modes := map[string]uint32{}
	sparse := newSparseArea(b.flagged)
	excluded := newExcludedSet(lim.Exclude)
	var trackedBytes int64 // of the tracked files among written
	add := func(c change) {
		if c.untracked {
			additions = append(additions, c.path)
		} else {
			updates = append(updates, c.path)
		}
	}
	for i, c := range changes {
		if sparse.outside(c.path, c.untracked) || excluded.take(r.Top, c.path, c.submodule != "") {
			continue
		}
		full := filepath.Join(r.Top, c.path)
		if len(c.submodule) == 4 && c.submodule[2] == 'M' {
			modified[c.path] = true
		}
		fi := &stats[i]
		if err := fi.err; err != nil {
			if treepath.Gone(err) {
				removes = append(removes, c.path)
				continue
			}
			snap.Skipped = append(snap.Skipped, journal.Skipped{Path: c.path, Reason: "unreadable"})
			continue
		}
		switch {
		case fi.isRegular():
			if fi.size > lim.MaxFileBytes {
				snap.Skipped = append(snap.Skipped, journal.Skipped{Path: c.path, Bytes: fi.size, Reason: "too_big"})
				continue
			}
			if !readable(full) {
				snap.Skipped = append(snap.Skipped, journal.Skipped{Path: c.path, Bytes: fi.size, Reason: "unreadable"})
				continue
			}
			total += fi.size
			written = append(written, sizedFile{c.path, fi.size, c.untracked})
			if !c.untracked {
				trackedBytes += fi.size
			}
			modes[c.path] = 0o100644
			if fi.mode&0o100 != 0 {
				modes[c.path] = 0o100755
			}
			add(c)
		case fi.isLink():
			modes[c.path] = 0o120000
			add(c)
		case fi.isDir():
			if isRepo(full) {
				// A nested repository or a submodule: its commit, as a gitlink.
				gitlinks[c.path] = true
				add(c)
			} else {
				// A tracked file replaced by a folder: the folder's files are
				// listed on their own; the file's entry goes.
				removes = append(removes, c.path)
			}
		default:
			// FIFOs, sockets and devices: git never holds them (docs/rollback.md#left).
			removes = append(removes, c.path)
		}
	}
	snap.Skipped = append(snap.Skipped, excluded.skipped...)
	if total > lim.MaxTotalBytes {
		return nil, tooLargeError(written, total, lim)
	}
	if lim.Found != nil {
		lim.Found(len(updates)+len(additions), total)
	}
	if b.tree != nil && !attributesFromIndex(b.flagged, updates, removes, modes) {
		tree, held, err := buildOnBase(ctx, r, b.tree, updates, additions, removes, modes, gitlinks)
		if err == nil {
			snap.held = held
			for _, p := range updates {
				if modes[p] != 0 && !gitlinks[p] {
					snap.moved = append(snap.moved, p)
				}
			}
			snap.movedBytes = trackedBytes
			return finish(ctx, r, snap, tree, sig, gitlinks, userLinks, modified)
		}
		if !errors.Is(err, errNoTreePath) {
			return nil, err
		}
	}
	if len(updates)+len(additions) > 0 {
		if err := testhook.Point("capture-object-write"); err != nil {
			return nil, gitFailure("update-index", err)
		}
	}
	target := b.idx
	var err error
	if b.persistent && len(updates)+len(removes)+len(additions) > 0 {
		// The private index's content stays the user's (its tree is the
		// base of the tree path): the capture's edits go into a scratch copy.
		if target, err = copyIndex(b.idx, tmpDir); err != nil {
			return nil, gitFailure("copy_index", err)
		}
		defer statefile.Remove(target)
	}
	// Files first, removals after, as git add -A does in one pass: a
	// .gitattributes that is gone from the tree still applies to the files
	// from the index (git reads it there), so it must leave the index last.
	if staged := append(updates, additions...); len(staged) > 0 {
		if _, err := on(target, nulJoin(staged), "update-index", "-z", "--add", "--replace", "--stdin"); err != nil {
			return nil, gitFailure("update-index", err)
		}
	}
	if len(removes) > 0 {
		if _, err := on(target, nulJoin(removes), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
			return nil, gitFailure("update-index", err)
		}
	}
	if err := testhook.Point("capture-write-tree"); err != nil {
		return nil, gitFailure("write-tree", err)
	}
	treeOut, err := on(target, nil, "write-tree")
	if err != nil {
		return nil, gitFailure("write-tree", err)
	}
	tree, err := git.NewOid(strings.TrimSpace(string(treeOut)))
	if err != nil {
		return nil, gitFailure("write-tree", err)
	}
	return finish(ctx, r, snap, tree, sig, gitlinks, userLinks, modified)
}

// pathStat is one listed path's lstat, kept small: a capture of 300,000
// new files holds one each.
type pathStat struct {
	err          error
	mode         uint32 // st_mode
	size         int64
	mtime, ctime int64 // ns
	ino, dev     uint64
}

func (s *pathStat) isRegular() bool { return s.mode&syscall.S_IFMT == syscall.S_IFREG }
func (s *pathStat) isLink() bool    { return s.mode&syscall.S_IFMT == syscall.S_IFLNK }
func (s *pathStat) isDir() bool     { return s.mode&syscall.S_IFMT == syscall.S_IFDIR }

// lstatAll lstats each listed path, in changes' order.
func lstatAll(top string, changes []change) []pathStat {
	out := make([]pathStat, len(changes))
	var st syscall.Stat_t
	for i, c := range changes {
		if err := syscall.Lstat(filepath.Join(top, c.path), &st); err != nil {
			out[i].err = &os.PathError{Op: "lstat", Path: c.path, Err: err}
			continue
		}
		out[i] = pathStat{mode: st.Mode, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, dev: st.Dev}
	}
	return out
}

// buildOnBase is the tree path for the paths a scan listed, when every one
// of them is a plain file or link: it returns errNoTreePath otherwise.
func buildOnBase(ctx context.Context, r *repo.Repo, base *git.Oid, updates, additions, removes []string, modes map[string]uint32, gitlinks map[string]bool) (*git.Oid, []Object, error) {
	if len(updates)+len(additions)+len(removes) == 0 {
		return base, nil, nil
	}
	files := make([]staged, 0, len(updates)+len(additions))
	for i, p := range append(updates, additions...) {
		m := modes[p]
		if gitlinks[p] {
			m = 0o160000
		}
		if m == 0 {
			return nil, nil, errNoTreePath
		}
		files = append(files, staged{path: p, mode: m, tracked: i < len(updates)})
	}
	return buildTree(ctx, r, base, files, removes)
}

// attributesFromIndex says whether git would read some .gitattributes from
// the index rather than the tree: it does when the tracked file is gone
// from the tree or is not a regular file there (skip-worktree, deleted,
// replaced by a link). hash-object reads no index, so the index way decides.
func attributesFromIndex(flagged []gitindex.Entry, updates, removes []string, modes map[string]uint32) bool {
	isAttr := func(p string) bool { return p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes") }
	for _, e := range flagged {
		if e.SkipWorktree && isAttr(e.Path) {
			return true
		}
	}
	for _, p := range removes {
		if isAttr(p) {
			return true
		}
	}
	for _, p := range updates {
		if isAttr(p) && modes[p]&0o170000 != 0o100000 {
			return true
		}
	}
	return false
}

// finish completes a snapshot whose tree is written.
func finish(ctx context.Context, r *repo.Repo, snap *Snapshot, tree *git.Oid, sig string, gitlinks map[string]bool, userLinks map[string]string, modified map[string]bool) (*Snapshot, error) {
	snap.Tree = tree
	if err := readHead(r, snap); err != nil {
		return nil, gitFailure("head", err)
	}
	if err := listGitlinks(ctx, r, snap, gitlinks, userLinks, modified); err != nil {
		return nil, gitFailure("gitlinks", err)
	}
	sort.Slice(snap.Skipped, func(i, j int) bool { return snap.Skipped[i].Path < snap.Skipped[j].Path })
	for i := range snap.Skipped {
		snap.Skipped[i] = paths.FixSkipped(snap.Skipped[i])
	}
	if snap.Skipped == nil {
		snap.Skipped = []journal.Skipped{}
	}
	if snap.Submodules == nil {
		snap.Submodules = []journal.Submodule{}
	}
	if sig != "" {
		snap.memo = memo{Sig: sig, Tree: snap.Tree.String(), Skipped: snap.Skipped, Submodules: snap.Submodules}
	}
	return snap, nil
}

// tooLarge is failed.checkpoint_too_large's data, members in
// docs/errors.md#data's order.
type tooLarge struct {
	Repo    string      `json:"repo"`
	Bytes   int64       `json:"bytes"`
	Limit   int64       `json:"limit"`
	Largest []sizedPath `json:"largest"`
	// Folders are the untracked folders that hold most of Bytes, each
	// with the setting that leaves it out (largestFolders).
	Folders []excludable `json:"folders"`
}

type sizedPath struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Bytes   int64  `json:"bytes"`
}

// copyIndex copies the user's index into tmpDir, keeping its mtime: git
// decides "racily clean" entries from it, and a fresh mtime would hide an edit
// that keeps a file's size (docs/checkpoints.md#how-a-capture-runs). git replaces its index by rename,
// so the copy is never half written. No index yet: no copy, and a name no
// file has, which git may then create. The copy is a new file of an
// unpredictable name in a folder reached link-free (statefile), so nothing
// planted in the state folder can receive it.
func copyIndex(src, tmpDir string) (string, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return statefile.TempName(tmpDir, "capture-*.index")
	}
	if err != nil {
		return "", err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return "", err
	}
	out, err := statefile.CreateTemp(tmpDir, "capture-*.index")
	if err != nil {
		return "", err
	}
	dst := out.Name()
	_, err = io.Copy(out, in)
	if err == nil {
		err = statefile.SetModTime(out, fi.ModTime())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		statefile.Remove(dst)
		return "", err
	}
	return dst, nil
}

// readFlags lists the flagged entries of the index copy, through git when the
// index is split (its entries live in a shared file).
func readFlags(ctx context.Context, r *repo.Repo, idx string, env []string) ([]gitindex.Entry, error) {
	ix, err := gitindex.Read(idx)
	if err == nil {
		return ix.Flagged, nil
	}
	if !errors.Is(err, gitindex.ErrSplit) {
		return nil, gitFailure("read_index", err)
	}
	out, err := r.Git.RunCall(ctx, gitcli.Call{Env: env}, "ls-files", "-z", "-v", "--stage")
	if err != nil {
		return nil, gitFailure("ls-files", err)
	}
	var flagged []gitindex.Entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<tag> <mode> <oid> <stage>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || len(meta) < 2 {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) < 4 {
			continue
		}
		tag := f[0]
		var mode uint32
		fmt.Sscanf(f[1], "%o", &mode)
		e := gitindex.Entry{Path: string(path), Mode: mode,
			AssumeValid:  tag != strings.ToUpper(tag),
			SkipWorktree: strings.EqualFold(tag, "S"),
			SparseDir:    mode == 0o040000}
		if e.AssumeValid || e.SkipWorktree || e.SparseDir || mode == 0o160000 {
			flagged = append(flagged, e)
		}
	}
	return flagged, nil
}

// parseStatus reads `git status --porcelain=v2 -z` and keeps every path whose
// working-tree side differs from the index copy.
func parseStatus(out []byte) ([]change, error) {
	var changes []change
	recs := bytes.Split(out, []byte{0})
	for _, rec := range recs {
		if len(rec) == 0 {
			continue
		}
		switch rec[0] {
		case '1':
			// 1 XY sub mH mI mW hH hI path
			f := bytes.SplitN(rec, []byte{' '}, 9)
			if len(f) != 9 {
				return nil, fmt.Errorf("unexpected status line %q", rec)
			}
			xy, sub := string(f[1]), string(f[2])
			s := ""
			if sub[0] == 'S' {
				s = sub
			}
			if xy[1] != '.' || (s != "" && s[1] == 'C') {
				changes = append(changes, change{path: string(f[8]), submodule: s})
			}
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := bytes.SplitN(rec, []byte{' '}, 11)
			if len(f) != 11 {
				return nil, fmt.Errorf("unexpected status line %q", rec)
			}
			changes = append(changes, change{path: string(f[10])})
		case '?':
			p := string(rec[2:])
			changes = append(changes, change{path: strings.TrimSuffix(p, "/"), untracked: true})
		case '2':
			return nil, fmt.Errorf("unexpected rename in status output")
		}
	}
	return changes, nil
}

func readHead(r *repo.Repo, snap *Snapshot) error {
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	ref, err := lib.References.Lookup("HEAD")
	if err != nil {
		return err
	}
	defer ref.Free()
	if target := ref.SymbolicTarget(); target != "" {
		snap.Branch = strings.TrimPrefix(target, "refs/heads/")
		resolved, err := ref.Resolve()
		if err != nil {
			if git.IsErrorCode(err, git.ErrorCodeNotFound) || git.IsErrorCode(err, git.ErrorCodeUnbornBranch) {
				return nil // unborn: head null, HEAD stays unborn
			}
			return err
		}
		defer resolved.Free()
		snap.Head = resolved.Target()
		return nil
	}
	snap.Head = ref.Target()
	return nil
}

// listGitlinks fills submodules[] from the tree's gitlinks. dirty: the
// nested repository's HEAD differs from the user's index, or it has changes
// to tracked files (docs/checkpoints.md#what-a-capture-holds).
func listGitlinks(ctx context.Context, r *repo.Repo, snap *Snapshot, links map[string]bool, userLinks map[string]string, modified map[string]bool) error {
	if len(links) == 0 {
		return nil
	}
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	odb, err := lib.Odb()
	if err != nil {
		return err
	}
	defer odb.Free()
	// The snapshot's new trees are not on disk until Store.
	held := map[git.Oid][]byte{}
	for _, o := range snap.held {
		if o.Type == packfile.Tree {
			held[o.ID] = o.Data
		}
	}
	var names []string
	for p := range links {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		mode, id, found, err := entryAt(odb, held, *snap.Tree, p)
		if err != nil {
			return err
		}
		if !found || mode != 0o160000 {
			continue
		}
		recorded, known := userLinks[p]
		d := modified[p] || (known && recorded != id.String())
		if !d {
			d = nestedHasChanges(r, p)
		}
		sm := paths.FixSubmodule(journal.Submodule{Path: p, Commit: id.String(), Dirty: d})
		snap.Submodules = append(snap.Submodules, sm)
	}
	return nil
}

// nestedHasChanges reports changes to tracked files inside a nested
// repository that status did not already report on (docs/checkpoints.md#what-a-capture-holds).
// libgit2 reads it, never git(1): a nested repository's config and
// .gitattributes are files of the work tree, anyone's to write, and git
// status there ran the filter commands they name (a clean filter for
// every file whose stat changed) on every capture, hooks' included, where
// git in this repository never looks inside an untracked repository.
// libgit2 runs no command a config names, and its status writes nothing
// (no refresh of the nested index, which is its user's).
func nestedHasChanges(r *repo.Repo, p string) bool {
	dir := filepath.Join(r.Top, p)
	if !isRepo(dir) {
		return false
	}
	nested, err := git.OpenRepositoryExtended(dir, git.RepositoryOpenNoSearch, "")
	if err != nil {
		return false
	}
	defer nested.Free()
	list, err := nested.StatusList(&git.StatusOptions{Show: git.StatusShowIndexAndWorkdir,
		Flags: git.StatusOptExcludeSubmodules})
	if err != nil {
		return false
	}
	defer list.Free()
	n, err := list.EntryCount()
	return err == nil && n > 0
}

func isRepo(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// readable says whether the process may read path: access(2), one
// system call, where opening and closing it would be three or more for
// every file of a large capture. A file that still cannot be opened when
// it is stored sends the capture the index way, as a file that changed.
func readable(path string) bool {
	return unix.Access(path, unix.R_OK) == nil
}

func skippedEntry(top string, e gitindex.Entry) journal.Skipped {
	if e.SparseDir {
		return journal.Skipped{Path: strings.TrimSuffix(e.Path, "/") + "/", Bytes: 0, Reason: "skip_worktree"}
	}
	bytes := int64(e.Size)
	if fi, err := os.Lstat(filepath.Join(top, e.Path)); err == nil && !fi.IsDir() {
		bytes = fi.Size()
	}
	return journal.Skipped{Path: e.Path, Bytes: bytes, Reason: "skip_worktree"}
}

func pathsOf(es []gitindex.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

func nulJoin(list []string) []byte {
	var b bytes.Buffer
	for _, p := range list {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}

func gitFailure(step string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errcode.Newf(errcode.TimeoutCheckpoint, map[string]string{"repo": "."},
			"the capture passed venom.timeout").Wrap(err)
	}
	return errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: step},
		"the capture failed at %s", step).Wrap(err)
}
