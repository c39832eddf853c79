package scan

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/gitfiles"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/racy"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/runpace"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treepath"
)

// The quick scan finds what git status would list for the private index
// without running git: tracked files whose stat data moved (or is racy),
// and the untracked files of folders whose stat data moved, read again
// with lib/ignore against the scan record. A record is kept only when its
// first walk matched git status; anything undecided goes to git status.

// recordFormat changes whenever what a scan record means changes.
const recordFormat = 3

// maxQuickChanges bounds the tracked files whose stat data moved while
// their size and type did not (or that are racy): past it, git status,
// which refreshes the private index's stat data of those whose content is
// the same, costs less than hashing them at every capture. A file whose
// size or type moved is changed for git too, which never refreshes it: it
// is hashed at every capture either way, and does not count.
const maxQuickChanges = 256

// Record is what the last scan of a tree found outside the index.
type Record struct {
	Format int
	// Members is the private index's paths (gitindex.Stats.Members): what
	// is untracked depends on them.
	Members string
	// Settings is the stat data of git's config and exclude files.
	Settings string
	// Excludes are the global exclude files, as git resolved them.
	Excludes []string
	// Dirs are the folders git's untracked scan reads, by path ("" is the
	// top).
	Dirs []dirState
	// Untracked are the untracked files, links and nested repositories not
	// ignored, by path.
	Untracked Paths
	// Ignores are the .gitignore files the scan read, tracked or not: an
	// edit to one moves no folder, and can change what is ignored anywhere
	// under it.
	Ignores []dirState
	// Failed counts the walks that disagreed with git status; past two the
	// tree keeps to git status until the index changes.
	Failed int
}

// dirState is a folder, or an ignore file, as the scan found it.
type dirState struct {
	Path string
	Stat fsStat
	// Listed is when the stat data was taken, just before the folder or
	// file was read (unix ns).
	Listed int64
	// Sum is an ignore file's content digest.
	Sum string
}

// moved says whether d's stat data moved, or was taken too close to its
// last change to tell (lib/racy: a later change in the same second would
// not show); st is nil when the path is gone. git's untracked cache judges
// this against the index's write; reading again is never wrong, only
// slower.
func (d *dirState) moved(st *syscall.Stat_t) bool {
	return st == nil || statOf(st) != d.Stat || racy.Taken(d.Stat.Mtime, d.Stat.Ctime, time.Unix(0, d.Listed))
}

// fsStat is the stat data that moves when a folder's entries change.
type fsStat struct {
	Mtime int64
	Ctime int64
	Ino   uint64
	Size  int64
	Mode  uint32
}

func statOf(st *syscall.Stat_t) fsStat {
	return fsStat{Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Size: st.Size, Mode: st.Mode}
}

// errQuickUnsure sends a capture to git status.
var errQuickUnsure = errors.New("the quick scan cannot decide")

// errTooManyChanges is errQuickUnsure for more changed files than
// maxQuickChanges: the record itself still holds (Refresh).
var errTooManyChanges = fmt.Errorf("%w: too many changed files", errQuickUnsure)

// TooManyChanges says whether a quick scan gave way to git status for the
// number of files whose stat data moved alone.
func TooManyChanges(err error) bool { return errors.Is(err, errTooManyChanges) }

// Result is a quick scan's answer: the tracked files whose stat data
// moved, in index order, and the untracked paths, sorted.
type Result struct {
	Tracked   []string
	Untracked Paths
	Record    *Record // to save once the capture succeeded; nil: unchanged
	// Vouched, when the file system monitor's answer narrowed the scan,
	// says of a path whether the monitor vouches that it did not change
	// since the last capture (neither it nor a folder above it named).
	Vouched func(path string) bool
}

// List is the answer as git status's would be read: the changes, and
// what stands for status's output in the memo's signature. It is made on
// demand: a steady capture of a tree of 300,000 untracked files compares
// them with the memo's listing one by one instead (lib/capture/carry.go).
func (res *Result) List() (status []byte, changes []Change) {
	size := len("venom quick scan\x00")
	for _, c := range res.Tracked {
		size += len(c) + 3
	}
	untracked := res.Untracked.Strings()
	for _, u := range untracked {
		size += len(u) + 3
	}
	status = append(make([]byte, 0, size), "venom quick scan\x00"...)
	changes = make([]Change, 0, len(res.Tracked)+len(untracked))
	for _, c := range res.Tracked {
		changes = append(changes, Change{Path: c})
		status = append(append(append(status, "T "...), c...), 0)
	}
	for _, u := range untracked {
		changes = append(changes, Change{Path: u, Untracked: true})
		status = append(append(append(status, "U "...), u...), 0)
	}
	return status, changes
}

// Quick is the quick scan of one private index: the index, and the file
// that keeps its scan record.
type Quick struct {
	Index  string
	Record string
}

// Load reads the scan record, nil when there is none or it is damaged.
func (q Quick) Load() *Record {
	b, err := statefile.ReadFile(q.Record)
	if err != nil {
		return nil
	}
	rec, err := decodeRecord(b)
	if err != nil {
		return nil
	}
	return rec
}

// Save keeps rec as the scan record.
func (q Quick) Save(rec *Record) {
	if statefile.WriteAtomicFrom(q.Record, 0o666, rec.writeTo) != nil {
		_ = statefile.Remove(q.Record)
	}
}

// Drop throws the scan record away.
func (q Quick) Drop() {
	_ = statefile.Remove(q.Record)
	q.Forget()
}

// Walked says whether rec lists the tree's folders: a quick scan can then
// stand for git status.
func (rec *Record) Walked() bool { return rec != nil && rec.Dirs != nil }

// quickUsable says whether a quick scan can stand for git status on an
// index.
func quickUsable(r *repo.Repo, stats *gitindex.Stats) bool {
	for _, kv := range r.Git.Env {
		// git -c …: settings this process cannot see.
		if strings.HasPrefix(kv, "GIT_CONFIG_PARAMETERS=") || strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") {
			return false
		}
	}
	if stats.Flagged {
		return false
	}
	for _, x := range stats.Extensions {
		if x == "sdir" || x == "link" {
			return false
		}
	}
	return true
}

// Scan lists what git status would list for the private index, or
// returns errQuickUnsure. drop: the record no longer holds and must be
// made again. settings are git's files outside the tree
// (gitfiles.Settings). An error that is gitindex.ErrFault says the index
// was cut short under its mapping: git status cannot read it either. m,
// when set, is the file system monitor's answer (monitor.go): where it
// continues the last capture's, only what it names is stat'ed.
func (q Quick) Scan(r *repo.Repo, rec *Record, settings []string, m *Monitored) (res *Result, drop bool, err error) {
	defer testhook.Timed("quick-scan", time.Now())
	stats, err := gitindex.ReadStats(q.Index)
	if err != nil {
		return nil, false, errQuickUnsure
	}
	defer stats.Close()
	if err := testhook.Point("quick-scan-mapped"); err != nil {
		return nil, false, errQuickUnsure
	}
	if fault := stats.Guard(func() { res, drop, err = q.scan(r, rec, settings, stats, m) }); fault != nil {
		return nil, true, fault
	}
	return res, drop, err
}

// scan is Scan on the mapped index stats, inside its guard.
func (q Quick) scan(r *repo.Repo, rec *Record, settings []string, stats *gitindex.Stats, m *Monitored) (res *Result, drop bool, err error) {
	if !quickUsable(r, stats) {
		return nil, false, errQuickUnsure
	}
	if stats.Members != rec.Members || settingsDigest(settings, rec.Excludes) != rec.Settings {
		return nil, true, errQuickUnsure
	}
	files, dirs, narrowed := m.narrow(q, rec, stats)
	if !narrowed {
		files, dirs = nil, nil
	}
	if narrowed {
		testhook.Counted("fsmonitor-narrowed", len(files)+len(dirs))
	}
	changed, unsure, err := statTracked(r.Top, stats, files, narrowed)
	if err != nil {
		return nil, false, err
	}
	if unsure > maxQuickChanges {
		return nil, false, errTooManyChanges
	}
	// An ignore file that changed can change what is ignored anywhere under
	// it: the record is made again, from git status.
	known := make(map[string]bool, len(rec.Ignores))
	for i := range rec.Ignores {
		f := &rec.Ignores[i]
		known[f.Path] = true
		var st syscall.Stat_t
		if name := treepath.Abs(r.Top, f.Path); syscall.Lstat(name, &st) != nil || f.moved(&st) && !sameContent(name, f.Sum) {
			return nil, true, errQuickUnsure
		}
	}
	for _, c := range changed {
		if isIgnoreFile(c) && !known[c] {
			return nil, true, errQuickUnsure
		}
	}
	if len(changed) > 0 {
		nc := store.NewNoConversion(r)
		for _, c := range changed {
			if !nc.AttributesQuiet(c) {
				// git status compares such a file through its filters,
				// and refreshes the index's stat data when it is
				// unchanged; the quick scan would hand it to git
				// hash-object at every capture instead.
				return nil, false, errQuickUnsure
			}
		}
	}
	moved, err := statDirs(r.Top, rec.Dirs, dirs, narrowed)
	if err != nil {
		return nil, true, errQuickUnsure
	}
	res = &Result{}
	untracked := rec.Untracked
	testhook.Counted("quick-relisted", len(moved))
	if len(moved) > 0 {
		next, err := relist(r, stats, rec, moved)
		if err != nil {
			return nil, true, errQuickUnsure
		}
		res.Record = next
		untracked = next.Untracked
	}
	res.Tracked, res.Untracked = changed, untracked
	if narrowed {
		res.Vouched = m.vouched()
	}
	return res, false, nil
}

func isIgnoreFile(p string) bool { return p == ".gitignore" || strings.HasSuffix(p, "/.gitignore") }

// statTracked returns, in index order, the tracked files whose stat data
// differs from the index's or is racy against its write (git's own rule,
// lib/racy, no wider: the capture must be the tree git add would give),
// and how many of them git might still find unchanged. narrowed: only the
// index positions in only (sorted) are looked at, the file system monitor
// vouching for the others (monitor.go).
func statTracked(top string, stats *gitindex.Stats, only []int, narrowed bool) (changed []string, unsure int, err error) {
	dir, err := syscall.Open(top, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, errQuickUnsure
	}
	defer syscall.Close(dir)
	class := make([]statClass, stats.Len())
	classify := func(i int, st *syscall.Stat_t, err error) {
		s := stats.Stat(i)
		switch {
		case err != nil:
			class[i] = statChanged // gone, or no longer reachable as a file
		case racy.Entry(s.MtimeSec, stats.Mtime):
			class[i] = statUnsure
		default:
			class[i] = compareStat(&s, st)
		}
	}
	// Each file in its folder, reached as git reaches it: a file under a
	// folder replaced by a link is gone for git, however alike the file
	// the link leads to (LstatAll). Each worker reads the mapped index
	// under its own guard.
	var faulted atomic.Bool
	count := stats.Len()
	if narrowed {
		count = len(only)
	}
	parallelRanges(count, func(start, end int) {
		folder := folderAt{top: top, base: dir, fd: -1}
		defer folder.close()
		var st syscall.Stat_t
		fault := stats.Guard(func() {
			for k := start; k < end; k++ {
				i := k
				if narrowed {
					i = only[k]
				}
				p, cp := stats.Path(i), stats.CPath(i)
				cut := bytes.LastIndexByte(p, '/')
				if parent := p[:max(cut, 0)]; !folder.done || folder.path != string(parent) {
					folder.open(string(parent))
				}
				classify(i, &st, folder.lstatIn(cp[cut+1:], &st))
			}
		})
		if fault != nil {
			faulted.Store(true)
		}
	})
	if faulted.Load() {
		return nil, 0, gitindex.ErrFault
	}
	for i, c := range class {
		if narrowed && c == statSame {
			continue
		}
		if c != statSame {
			changed = append(changed, string(stats.Path(i)))
		}
		if c == statUnsure {
			unsure++
		}
	}
	return changed, unsure, nil
}

// statClass is what a file's stat data says of its content.
type statClass uint8

const (
	statSame    statClass = iota // as the index cached it: unchanged
	statUnsure                   // moved, or racy: only its bytes can tell
	statChanged                  // its size or type moved: changed, for git too
)

// compareStat classes st against the index's stat data s. A size or type
// that moved is a change git status reports without reading the file
// (ie_modified), unless the index's size is 0, which read-tree and
// update-index --cacheinfo leave.
func compareStat(s *gitindex.Stat, st *syscall.Stat_t) statClass {
	if SameStat(s, st) {
		return statSame
	}
	if !sameType(s, st) || s.Size != 0 && s.Size != uint32(st.Size) {
		return statChanged
	}
	return statUnsure
}

// sameType says whether st is the kind of file, and of the executable
// bit, that the index's mode s.Mode records.
func sameType(s *gitindex.Stat, st *syscall.Stat_t) bool {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return s.Mode == 0o100644 && st.Mode&0o100 == 0 || s.Mode == 0o100755 && st.Mode&0o100 != 0
	case syscall.S_IFLNK:
		return s.Mode == 0o120000
	}
	return false
}

// SameStat compares as git's ie_match_stat does, and more strictly: every
// field git may compare, to the nanosecond, whatever core.checkStat and
// core.trustCtime say.
func SameStat(s *gitindex.Stat, st *syscall.Stat_t) bool {
	if s.MtimeSec != uint32(st.Mtim.Sec) || s.MtimeNsec != uint32(st.Mtim.Nsec) ||
		s.CtimeSec != uint32(st.Ctim.Sec) || s.CtimeNsec != uint32(st.Ctim.Nsec) ||
		s.Ino != uint32(st.Ino) || s.UID != st.Uid || s.GID != st.Gid || s.Size != uint32(st.Size) {
		return false
	}
	return sameType(s, st)
}

// statDirs returns the indexes of the recorded folders whose stat data
// moved or was taken too close to their last change. A folder gone or no
// longer a folder is an error: its untracked files went with it, which a
// re-read of its parent alone would not tell. narrowed: only the folders
// at the indexes only are looked at, and all of them are read again (the
// file system monitor named something in them, monitor.go).
func statDirs(top string, dirs []dirState, only []int, narrowed bool) ([]int, error) {
	bad := make([]bool, len(dirs))
	gone := false
	var mu sync.Mutex
	check := func(i int, st *syscall.Stat_t, err error) {
		if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			mu.Lock()
			gone = true
			mu.Unlock()
			return
		}
		bad[i] = dirs[i].moved(st)
	}
	if narrowed {
		parallel(len(only), func(k int) {
			var st syscall.Stat_t
			i := only[k]
			check(i, &st, syscall.Lstat(treepath.Abs(top, dirs[i].Path), &st))
			bad[i] = true
		})
	} else {
		parallel(len(dirs), func(i int) {
			var st syscall.Stat_t
			check(i, &st, syscall.Lstat(treepath.Abs(top, dirs[i].Path), &st))
		})
	}
	if gone {
		return nil, errQuickUnsure
	}
	var moved []int
	for i, b := range bad {
		if b {
			moved = append(moved, i)
		}
	}
	return moved, nil
}

// parallel runs fn(0..n-1) on a few goroutines: stat calls wait on the
// kernel, not on the CPU, so more workers than cores still help.
func parallel(n int, fn func(i int)) {
	parallelRanges(n, func(start, end int) {
		for i := start; i < end; i++ {
			fn(i)
		}
	})
}

// parallelRanges is parallel handing each worker a run of indexes
// [start, end) at a time.
func parallelRanges(n int, fn func(start, end int)) {
	workers := 2 * runtime.GOMAXPROCS(0)
	if n < 256 {
		workers = 1
	}
	const chunk = 128
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A stat of 300,000 files is seconds of system calls.
			var pc runpace.Pacer
			for {
				mu.Lock()
				start := next
				next += chunk
				mu.Unlock()
				if start >= n {
					return
				}
				fn(start, min(n, start+chunk))
				pc.Pace()
			}
		}()
	}
	wg.Wait()
}

// relist reads again the moved folders and returns the record with their
// new listings.
func relist(r *repo.Repo, stats *gitindex.Stats, rec *Record, moved []int) (*Record, error) {
	w := newWalker(r, stats, rec.Excludes)
	w.known = rec.Dirs
	w.ignores = append(w.ignores, rec.Ignores...)
	w.knownIgnores = map[string]bool{}
	for _, f := range rec.Ignores {
		w.knownIgnores[f.Path] = true
	}
	again := map[string]bool{}
	for _, i := range moved {
		again[rec.Dirs[i].Path] = true
	}
	w.dirs = make([]dirState, 0, len(rec.Dirs)+16)
	for _, d := range rec.Dirs {
		if !again[d.Path] {
			w.dirs = append(w.dirs, d)
		}
	}
	for _, i := range moved {
		path := rec.Dirs[i].Path
		stack, err := w.stackFor(path)
		if err != nil {
			return nil, err
		}
		if err := w.list(path, stack, false); err != nil {
			return nil, err
		}
	}
	// The untracked entries of folders not read again stay, merged with
	// those read now (sorted: a few folders' worth), as the list is read.
	read := sortTail(w.untracked)
	w.untracked = nil
	next, err := w.record(rec)
	if err != nil {
		return nil, err
	}
	next.Untracked = Paths{data: rec.Untracked.data, drop: again, add: read}
	return next, nil
}

// walker reads folders as git's untracked scan does (dir.c
// read_directory_recursive with --untracked-files=all).
type walker struct {
	top    string
	stats  *gitindex.Stats
	global []*ignore.List
	stacks map[string]*ignore.Stack
	// known are the folders of the record, by path, each stat-checked
	// on its own: a re-read leaves them to that check (nil: walking the
	// whole tree). Searched, not made into a map: 10,000 folders' map
	// was 2 MB of a steady capture's memory.
	known     []dirState
	dirs      []dirState
	untracked []string
	ignores   []dirState
	// knownIgnores are the ignore files of the record (a re-read): one
	// found that is not among them is new.
	knownIgnores map[string]bool
	unreadable   bool // a global exclude file exists but cannot be read
	// buf is readFolder's, for every folder read.
	buf []byte
}

func newWalker(r *repo.Repo, stats *gitindex.Stats, excludes []string) *walker {
	w := &walker{top: r.Top, stats: stats, stacks: map[string]*ignore.Stack{}}
	for _, f := range excludes {
		b, err := statefile.ReadRegular(f, false)
		switch {
		case err == nil:
			w.global = append(w.global, ignore.Parse(b, ""))
		case !errors.Is(err, os.ErrNotExist):
			// git dies on an exclude file it cannot read (a folder, say).
			w.unreadable = true
		}
	}
	return w
}

func (w *walker) record(old *Record) (*Record, error) {
	sort.Slice(w.dirs, func(i, j int) bool { return w.dirs[i].Path < w.dirs[j].Path })
	w.untracked = sortTail(w.untracked)
	sort.Slice(w.ignores, func(i, j int) bool { return w.ignores[i].Path < w.ignores[j].Path })
	rec := *old
	rec.Dirs, rec.Ignores = w.dirs, w.ignores
	var ok bool
	if rec.Untracked, ok = PathsOf(w.untracked); !ok {
		return nil, errQuickUnsure // listed twice
	}
	return &rec, nil
}

// sortTail sorts list, whose head is often sorted already: a re-read keeps
// the record's entries in their order and appends the re-read folders'.
// The tail past the sorted head is sorted alone and merged in, where
// sorting 300,000 paths for ten new ones cost a tenth of a second.
func sortTail(list []string) []string {
	k := 1
	for k < len(list) && list[k-1] <= list[k] {
		k++
	}
	if k >= len(list) {
		return list
	}
	// Merged from the back, in place: only the tail is copied.
	tail := append([]string(nil), list[k:]...)
	sort.Strings(tail)
	i, j := k-1, len(tail)-1
	for o := len(list) - 1; j >= 0; o-- {
		if i >= 0 && list[i] > tail[j] {
			list[o] = list[i]
			i--
		} else {
			list[o] = tail[j]
			j--
		}
	}
	return list
}

// readIgnore returns the .gitignore of folder dir ("" the top), nil when
// it has none, and notes its stat data. One that is not a regular file is
// refused: git reads it with O_NOFOLLOW semantics this scan does not
// reproduce.
func (w *walker) readIgnore(dir string) ([]byte, error) {
	rel := joinRel(dir, ".gitignore")
	name := treepath.Abs(w.top, rel)
	listed := time.Now().UnixNano()
	var st syscall.Stat_t
	if err := syscall.Lstat(name, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil, nil
		}
		return nil, errQuickUnsure
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, errQuickUnsure
	}
	// Opened without following a link or blocking: the lstat above can
	// be raced by a FIFO swapped in.
	b, err := statefile.ReadRegular(name, true)
	if err != nil {
		return nil, errQuickUnsure
	}
	if b == nil {
		b = []byte{}
	}
	if w.knownIgnores == nil || !w.knownIgnores[rel] {
		w.ignores = append(w.ignores, dirState{Path: rel, Stat: statOf(&st), Listed: listed, Sum: contentSum(b)})
	}
	return b, nil
}

func contentSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sameContent says whether the file at path still holds what sum digests:
// an ignore file touched, or written too recently for its stat data to
// tell, still says the same.
func sameContent(path, sum string) bool {
	b, err := statefile.ReadRegular(path, true)
	return err == nil && contentSum(b) == sum
}

// stackFor returns the ignore rules in force in folder dir.
func (w *walker) stackFor(dir string) (*ignore.Stack, error) {
	if s, ok := w.stacks[dir]; ok {
		return s, nil
	}
	if w.unreadable {
		return nil, errQuickUnsure
	}
	var s *ignore.Stack
	if dir == "" {
		top, err := w.readIgnore("")
		if err != nil {
			return nil, err
		}
		s = ignore.Root(w.global...).Top(top)
	} else {
		parent, err := w.stackFor(treepath.Parent(dir))
		if err != nil {
			return nil, err
		}
		gi, err := w.readIgnore(dir)
		if err != nil {
			return nil, err
		}
		s = parent.Child(filepath.Base(dir), gi)
	}
	if s.Unsupported() {
		return nil, errQuickUnsure
	}
	w.stacks[dir] = s
	return s, nil
}

// tracked says whether the index holds path as a file.
func (w *walker) tracked(path string) bool {
	i := w.stats.Find([]byte(path))
	return i < w.stats.Len() && string(w.stats.Path(i)) == path
}

// trackedDir says whether the index holds files under folder path.
func (w *walker) trackedDir(path string) bool {
	prefix := []byte(path + "/")
	i := w.stats.Find(prefix)
	return i < w.stats.Len() && bytes.HasPrefix(w.stats.Path(i), prefix)
}

// list reads folder dir, whose rules are stack, into the walker: its stat
// data, its untracked entries, and the folders under it that are not
// known, wholly. recurse: read known folders too (the first walk).
func (w *walker) list(dir string, stack *ignore.Stack, recurse bool) error {
	full := treepath.Abs(w.top, dir)
	listed := time.Now().UnixNano()
	var st syscall.Stat_t
	if w.buf == nil {
		w.buf = make([]byte, 16<<10)
	}
	entries, err := readFolder(full, &st, w.buf)
	if err != nil {
		return errQuickUnsure
	}
	w.dirs = append(w.dirs, dirState{Path: dir, Stat: statOf(&st), Listed: listed})
	for _, e := range entries {
		name := e.name
		if name == ".git" {
			continue
		}
		if name == ".gitignore" && w.knownIgnores != nil && !w.knownIgnores[joinRel(dir, name)] {
			// A new ignore file: what it hides is for a new walk to find.
			return errQuickUnsure
		}
		rel := joinRel(dir, name)
		switch e.kind {
		case kindDir:
			if !recurse && w.isKnown(rel) {
				continue // stat-checked on its own
			}
			if stack.Excluded(name, true) {
				// Ignored, and so is everything under it, tracked folder or not.
				continue
			}
			if !w.trackedDir(rel) {
				nested, err := nestedRepo(treepath.Abs(w.top, rel))
				if err != nil {
					return err
				}
				if nested {
					w.untracked = append(w.untracked, rel)
					continue
				}
			}
			gi, err := w.readIgnore(rel)
			if err != nil {
				return err
			}
			child := stack.Child(name, gi)
			if child.Unsupported() {
				return errQuickUnsure
			}
			w.stacks[rel] = child
			if err := w.list(rel, child, true); err != nil {
				return err
			}
		case kindFile, kindLink:
			if w.trackedDir(rel) {
				// A tracked folder became a file or a link: git takes the
				// files under it as deleted, which their stat data, seen
				// through a link, may not tell.
				return errQuickUnsure
			}
			if w.tracked(rel) || stack.Excluded(name, false) {
				continue
			}
			w.untracked = append(w.untracked, rel)
		}
		// FIFOs, sockets and devices: git lists none.
	}
	return nil
}

// folderEntry is one entry of a folder as readFolder lists it.
type folderEntry struct {
	name string
	kind entryKind
}

// entryKind is what a folder's entry is, as far as the scan cares.
type entryKind uint8

const (
	kindOther entryKind = iota // FIFOs, sockets and devices: git lists none
	kindDir
	kindFile
	kindLink
)

// isKnown says whether the record holds folder path.
func (w *walker) isKnown(path string) bool {
	i := sort.Search(len(w.known), func(i int) bool { return w.known[i].Path >= path })
	return i < len(w.known) && w.known[i].Path == path
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// nestedRepo says whether dir holds a repository that git's untracked
// scan lists as one entry (is_nonbare_repository_dir): a .git folder, or a
// .git file naming one (a linked worktree, an absorbed submodule). A .git
// git might not take for a repository is an error: the scan cannot tell
// what git would do.
func nestedRepo(dir string) (bool, error) {
	l, err := repo.Inspect(dir)
	if err != nil {
		return false, errQuickUnsure
	}
	return l.Kind != repo.NoRepository, nil
}

// Remake walks the whole tree after a git status listed untracked,
// and keeps the record when the walk lists the same. old is the record
// there was, if any: after two walks that disagreed with git, none is
// tried again until the index's files change.
func (q Quick) Remake(ctx context.Context, r *repo.Repo, old *Record, untracked, settings []string) {
	stats, err := gitindex.ReadStats(q.Index)
	if err != nil {
		return
	}
	defer stats.Close()
	// Cut short under its mapping, the index makes no record.
	_ = stats.Guard(func() { q.remake(ctx, r, old, untracked, settings, stats) })
}

// remake is Remake on the mapped index stats, inside its guard.
func (q Quick) remake(ctx context.Context, r *repo.Repo, old *Record, untracked, settings []string, stats *gitindex.Stats) {
	if !quickUsable(r, stats) {
		return
	}
	failed := 0
	if old != nil && old.Members == stats.Members {
		failed = old.Failed
	}
	if failed >= 2 {
		return
	}
	excludes, ok := globalExcludes(ctx, r)
	if !ok {
		return
	}
	w := newWalker(r, stats, excludes)
	stack, err := w.stackFor("")
	if err == nil {
		err = w.list("", stack, true)
	}
	var rec *Record
	if err == nil {
		rec, err = w.record(&Record{Format: recordFormat, Members: stats.Members, Excludes: excludes,
			Settings: settingsDigest(settings, excludes)})
	}
	want := append([]string(nil), untracked...)
	sort.Strings(want)
	if err != nil || !sameList(want, rec.Untracked) {
		// The walk met what it cannot judge, or judged otherwise than git.
		rec = &Record{Format: recordFormat, Members: stats.Members, Failed: failed + 1}
	}
	q.Save(rec)
}

// Refresh brings a walked record up to date after git status stood in for
// a quick scan that found too many changes (TooManyChanges): the folders
// whose stat data moved are read again, and the record is kept when it
// then lists the untracked files git listed; else the tree is walked again
// (Remake). Left stale, it would make the next capture read those folders.
func (q Quick) Refresh(ctx context.Context, r *repo.Repo, rec *Record, untracked, settings []string) {
	stats, err := gitindex.ReadStats(q.Index)
	if err != nil {
		return
	}
	defer stats.Close()
	var next *Record
	remake := false
	fault := stats.Guard(func() {
		if !quickUsable(r, stats) || stats.Members != rec.Members || settingsDigest(settings, rec.Excludes) != rec.Settings {
			return
		}
		for i := range rec.Ignores {
			f := &rec.Ignores[i]
			var st syscall.Stat_t
			if name := treepath.Abs(r.Top, f.Path); syscall.Lstat(name, &st) != nil || f.moved(&st) && !sameContent(name, f.Sum) {
				remake = true
				return
			}
		}
		moved, err := statDirs(r.Top, rec.Dirs, nil, false)
		if err != nil {
			remake = true
			return
		}
		testhook.Counted("quick-refreshed", len(moved))
		if len(moved) == 0 {
			return
		}
		if next, err = relist(r, stats, rec, moved); err != nil {
			next, remake = nil, true
			return
		}
		want := append([]string(nil), untracked...)
		sort.Strings(want)
		if !sameList(want, next.Untracked) {
			next, remake = nil, true
		}
	})
	switch {
	case fault != nil:
	case next != nil:
		q.Save(next)
	case remake:
		stats.Close()
		q.Remake(ctx, r, rec, untracked, settings)
	}
}

// sameList says whether list holds exactly the paths of p, in order.
func sameList(list []string, p Paths) bool {
	it := p.Iter()
	for _, s := range list {
		if !it.Next() || string(it.Path()) != s {
			return false
		}
	}
	return !it.Next()
}

// globalExcludes are the exclude files git reads besides the .gitignore
// files, highest precedence first: info/exclude, then core.excludesFile or
// its XDG default. ok is false when the tree ignores case (the scan
// compares names exactly) or git could not be asked. The two keys are
// read in process where that is git config --path's answer (excludesIn),
// else from git.
func globalExcludes(ctx context.Context, r *repo.Repo) ([]string, bool) {
	var excludesFile *string
	known, ok := false, false
	if entries, plain := r.ConfigFiles("core.excludesfile", "core.ignorecase"); plain {
		excludesFile, known, ok = excludesIn(entries, r.Files().Env)
	}
	if !known {
		excludesFile, ok = gitExcludesFile(ctx, r)
	}
	if !ok {
		return nil, false
	}
	return excludeFiles(r, excludesFile), true
}

// excludesIn reads core.excludesFile (nil: unset) as git config -z --path
// --get-regexp prints it from entries, every value of both keys in order,
// and core.ignorecase as gitExcludesFile does. known is false where the
// answer needs git: another user's home ("~name/") or git's prefix
// ("%(prefix)/"). A value git config --path refuses (no "=", "~/" without
// HOME) fails the command: ok is false as for git's failure.
func excludesIn(entries []gitconfig.Entry, environ []string) (excludesFile *string, known, ok bool) {
	home, setHome := gitcli.LookupEnv(environ, "HOME")
	for _, e := range entries {
		v := e.Value
		switch {
		case !e.HasValue:
			return nil, true, false // config_error_nonbool
		case strings.HasPrefix(v, "%(prefix)/"):
			return nil, false, false
		case strings.HasPrefix(v, "~"):
			// git's interpolate_path: "~" up to the first slash names
			// the user, none the HOME that replaces it.
			if user, _, _ := strings.Cut(v[1:], "/"); user != "" {
				return nil, false, false
			}
			if !setHome {
				return nil, true, false
			}
			v = home + v[1:]
		}
		switch e.Name {
		case "core.excludesfile":
			excludesFile = &v
		case "core.ignorecase":
			if ignoresCase(v) {
				return nil, true, false
			}
		}
	}
	return excludesFile, true, true
}

// gitExcludesFile asks git for core.excludesFile and whether the tree
// ignores case, as excludesIn reads them.
func gitExcludesFile(ctx context.Context, r *repo.Repo) (*string, bool) {
	out, err := r.Git.RunCall(ctx, gitcli.Call{}, "config", "-z", "--path", "--get-regexp", `^core\.(excludesfile|ignorecase)$`)
	if err != nil && gitcli.ExitCode(err) != 1 { // 1: neither is set
		return nil, false
	}
	var excludesFile *string
	for _, kv := range bytes.Split(out, []byte{0}) {
		k, v, _ := strings.Cut(string(kv), "\n")
		switch strings.ToLower(k) {
		case "core.excludesfile":
			excludesFile = &v
		case "core.ignorecase":
			if ignoresCase(v) {
				return nil, false
			}
		}
	}
	return excludesFile, true
}

// ignoresCase says whether a core.ignorecase value may mean true: any
// but git's plain false words, so an odd spelling skips the quick scan.
func ignoresCase(v string) bool {
	return v != "false" && v != "no" && v != "off" && v != "0"
}

// excludeFiles lists info/exclude and then excludesFile, or the XDG
// default when it is unset. Set to "", git reads no global file
// (setup_standard_excludes falls back only on an unset one).
func excludeFiles(r *repo.Repo, excludesFile *string) []string {
	var files []string
	global := ""
	if excludesFile != nil {
		global = *excludesFile
	}
	list, _ := gitfiles.List(r.Files())
	for _, f := range list {
		switch {
		case f.Kind != gitfiles.Exclude || !f.Read:
		case f.Scope == gitfiles.Local:
			files = append(files, f.Path)
		case excludesFile == nil && global == "":
			global = f.Path // git's default, in the XDG folder
		}
	}
	if global != "" {
		files = append(files, global)
	}
	return files
}

// settingsDigest digests git's config files (settings) and the exclude
// files: a change to any can change what is ignored.
func settingsDigest(settings, excludes []string) string {
	h := sha256.New()
	FilesDigest(h, append(append([]string(nil), settings...), excludes...))
	return hex.EncodeToString(h.Sum(nil))
}

// FilesDigest writes to w what each of files holds, or that it is
// absent: git's settings files (config, attributes and exclude files) are
// small, and read rather than trusted by their stat data, which a
// same-size edit in the same clock tick leaves as it was (lib/racy). A
// file past maxSettingsRead, or not a regular file (a FIFO would block the
// read), is digested by its stat data, unless that is racy: then by the
// time, which matches no other digest.
func FilesDigest(w io.Writer, files []string) {
	for _, f := range files {
		taken := time.Now()
		st, err := os.Stat(f)
		if err != nil {
			fmt.Fprintf(w, "%s:absent\x00", f)
			continue
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if st.Mode().IsRegular() && st.Size() <= maxSettingsRead {
			if line, ok := digestOnce(f, sys, taken); ok {
				io.WriteString(w, line)
				continue
			}
		}
		if !ok || racy.Taken(sys.Mtim.Nano(), sys.Ctim.Nano(), taken) {
			fmt.Fprintf(w, "%s:racy:%d\x00", f, taken.UnixNano())
			continue
		}
		fmt.Fprintf(w, "%s:%d:%d:%d:%d\x00", f, st.Size(), sys.Mtim.Nano(), sys.Ino, sys.Ctim.Nano())
	}
}

// maxSettingsRead bounds the settings file FilesDigest reads.
const maxSettingsRead = 1 << 20

// digested holds the content lines FilesDigest made in this process, by
// path, with the stat data the file had: a capture digests the same files
// three times (the scan record, the memo's key, the listing's key).
var digested struct {
	sync.Mutex
	lines map[string]digestedLine
}

// digestReads counts the files digestOnce read, for tests.
var digestReads atomic.Int64

type digestedLine struct {
	st   [5]int64
	line string
}

// digestOnce is the content line of the regular file f, whose stat data
// (taken at taken) is st: read and kept, or kept already while its stat
// data stays. A line is kept only when the stat data tells a later change
// apart: not changed in the last second (lib/racy), the same after the
// read. ok is false when the file could not be read.
func digestOnce(f string, st *syscall.Stat_t, taken time.Time) (line string, ok bool) {
	var key [5]int64
	if st != nil {
		key = [5]int64{int64(st.Dev), int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()}
		digested.Lock()
		d, kept := digested.lines[f]
		digested.Unlock()
		if kept && d.st == key {
			return d.line, true
		}
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", false
	}
	digestReads.Add(1)
	line = fmt.Sprintf("%s:%d:%x\x00", f, len(b), sha256.Sum256(b))
	var after syscall.Stat_t
	if st != nil && !racy.Taken(st.Mtim.Nano(), st.Ctim.Nano(), taken) && syscall.Stat(f, &after) == nil &&
		[5]int64{int64(after.Dev), int64(after.Ino), after.Size, after.Mtim.Nano(), after.Ctim.Nano()} == key {
		digested.Lock()
		if digested.lines == nil {
			digested.lines = map[string]digestedLine{}
		}
		digested.lines[f] = digestedLine{st: key, line: line}
		digested.Unlock()
	}
	return line, true
}
