package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/fsmonitor"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treepath"
)

// With the repository's file system monitor (core.fsmonitor, lib/fsmonitor)
// a quick scan stats only what the monitor says changed since the last
// capture's query (docs/checkpoints.md#the-file-system-monitor). Each
// capture queries before it stats anything, so the state below (the token,
// the record and private index it is about, and the files not found clean)
// chains exactly; any break (no state, another record or index, an old
// token, a trivial answer, another monitor instance) is a full quick scan.

// monitorState is what a capture that used the quick scan keeps for the
// next one's query.
type monitorState struct {
	Token  string
	Saved  int64 // unix seconds
	Record fileID
	Index  fileID
	// Dirty are the tracked files the scan listed: not clean.
	Dirty []string
}

// fileID tells a file written again (a new file renamed into place, or
// rewritten) from the one it was.
type fileID struct {
	Ino          uint64
	Size         int64
	Mtime, Ctime int64
}

func idOf(path string) (fileID, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return fileID{}, false
	}
	return fileID{Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}

// maxTokenAge bounds how old a kept token may be. watchman forgets
// deleted files after gc_age (12 hours by default) and then answers an
// older clock with every file that exists, deletions missing, which
// git's sample hook passes on as changes.
const maxTokenAge = time.Hour

// Monitored is one capture's query of the monitor.
type Monitored struct {
	token string
	state *monitorState // the kept state, when the answer continues it
	paths []string      // what changed since state's token
}

func (q Quick) monitorFile() string { return strings.TrimSuffix(q.Record, ".scan") + ".fsmonitor" }

// Ask queries r's file system monitor, when it has one, since the token
// the last capture kept: nil without a monitor or a token to keep. Asked
// before anything of the scan is stat'ed.
func (q Quick) Ask(ctx context.Context, r *repo.Repo) *Monitored {
	hook := fsmonitor.Hook(r.Files())
	if hook == "" {
		q.Forget()
		return nil
	}
	defer testhook.Timed("fsmonitor-query", time.Now())
	var st *monitorState
	if b, err := statefile.ReadFile(q.monitorFile()); err == nil {
		st = &monitorState{}
		if json.Unmarshal(b, st) != nil {
			st = nil
		}
	}
	since := ""
	if st != nil {
		since = st.Token
	}
	ans, err := fsmonitor.Ask(ctx, r.Top, r.Git.Env, hook, since)
	if ans == nil {
		q.Forget()
		return nil
	}
	m := &Monitored{token: ans.Token}
	if err == nil && st != nil && time.Since(time.Unix(st.Saved, 0)) < maxTokenAge {
		m.state, m.paths = st, ans.Paths
	}
	testhook.Counted("fsmonitor-answered", len(ans.Paths))
	return m
}

// Keep saves m's token for the next capture, with the record and the
// private index as this capture leaves them and the tracked files its
// quick scan listed.
func (q Quick) Keep(m *Monitored, dirty []string) {
	rec, ok1 := idOf(q.Record)
	idx, ok2 := idOf(q.Index)
	if !ok1 || !ok2 {
		q.Forget()
		return
	}
	b, err := json.Marshal(monitorState{Token: m.token, Saved: time.Now().Unix(), Record: rec, Index: idx, Dirty: dirty})
	if err != nil || statefile.WriteAtomic(q.monitorFile(), b, 0o666) != nil {
		q.Forget()
	}
}

// Forget drops the kept token: the next capture scans everything.
func (q Quick) Forget() { _ = statefile.Remove(q.monitorFile()) }

// narrow is what a monitor's answer leaves to look at in a scan of rec
// over the mapped index stats: the index positions of the tracked files
// (sorted) and the record's folders to read again. ok is false when the
// answer does not continue this record and index.
func (m *Monitored) narrow(q Quick, rec *Record, stats *gitindex.Stats) (files, dirs []int, ok bool) {
	if m == nil || m.state == nil {
		return nil, nil, false
	}
	if id, ok := idOf(q.Record); !ok || id != m.state.Record {
		return nil, nil, false
	}
	if id, ok := idOf(q.Index); !ok || id != m.state.Index {
		return nil, nil, false
	}
	n := stats.Len()
	seenFile := map[int]bool{}
	addFiles := func(p string, under bool) {
		i := stats.Find([]byte(p))
		if i < n && string(stats.Path(i)) == p {
			seenFile[i] = true
		}
		if !under {
			return
		}
		prefix := []byte(p + "/")
		for j := stats.Find(prefix); j < n && bytes.HasPrefix(stats.Path(j), prefix); j++ {
			seenFile[j] = true
		}
	}
	seenDir := map[int]bool{}
	findDir := func(p string) int {
		i := sort.Search(len(rec.Dirs), func(i int) bool { return rec.Dirs[i].Path >= p })
		if i < len(rec.Dirs) && rec.Dirs[i].Path == p {
			return i
		}
		return -1
	}
	for _, p := range m.state.Dirty {
		addFiles(p, false)
	}
	for _, raw := range m.paths {
		// A path may name a folder with or without its "/" (git since
		// 2.43 takes both as the folder): everything under it counts.
		p := strings.TrimSuffix(raw, "/")
		addFiles(p, true)
		if i := findDir(p); i >= 0 {
			seenDir[i] = true
		}
		if i := findDir(treepath.Parent(p)); i >= 0 {
			seenDir[i] = true
		}
		prefix := p + "/"
		for i := sort.Search(len(rec.Dirs), func(i int) bool { return rec.Dirs[i].Path >= prefix }); i < len(rec.Dirs) && strings.HasPrefix(rec.Dirs[i].Path, prefix); i++ {
			seenDir[i] = true
		}
	}
	files = make([]int, 0, len(seenFile))
	for i := range seenFile {
		files = append(files, i)
	}
	sort.Ints(files)
	dirs = make([]int, 0, len(seenDir))
	for i := range seenDir {
		dirs = append(dirs, i)
	}
	sort.Ints(dirs)
	return files, dirs, true
}

// vouched is Result.Vouched for m's answer: a path is vouched for when
// neither it nor a folder above it is named (a name is taken as the file
// and as a folder, as narrow takes it).
func (m *Monitored) vouched() func(string) bool {
	named := make(map[string]bool, len(m.paths))
	for _, p := range m.paths {
		named[strings.TrimSuffix(p, "/")] = true
	}
	return func(p string) bool {
		if named[p] {
			return false
		}
		for i := strings.IndexByte(p, '/'); i >= 0; i = next(p, i) {
			if named[p[:i]] {
				return false
			}
		}
		return true
	}
}

// next is the index of the "/" after the one at i in p, or -1.
func next(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
