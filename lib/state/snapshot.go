package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// The fold snapshot is the log folded through a mark (journal.Resume), so
// a command folds only what follows: fold.json holds every agent's stub,
// fold.d/<agent>.json one agent's turns and checkpoints. The log stays the
// truth: a snapshot missing, a link, unreadable, of another format or off
// its mark is passed over. Only lock holders write them (Begin), whole and
// renamed in, once foldEvery records lie past a mark.
const (
	// allFormat is fold.json's: 5 added agents.Kept to each agent; 6 the
	// rollbacks that did not end to LastRollback (--undo's).
	allFormat = "git-venom fold 6"
	// ownFormat is an agent's file's, which 5 left as it was; 6 as
	// allFormat's; 7 added every label a checkpoint was given; 8 the
	// labels of the checkpoints it leaves out; 9 the turns that reused a
	// checkpoint.
	ownFormat = "git-venom fold 9"
)

// Each file is a line of JSON, snapshotHead, saying what it is and the
// mark it covers, then the fold: fold.json's a line of JSON
// (agents.MarshalSplit's all), an agent's file a line of JSON and its
// turn ends, which need no parse (agents.Part). Each JSON line is parsed
// once.
type snapshotHead struct {
	Format string         `json:"format"`
	Agent  string         `json:"agent,omitempty"`
	Log    journal.Resume `json:"log"`
}

// SnapshotPath is the fold snapshot's file of all agents.
func (s *Store) SnapshotPath() string { return filepath.Join(s.Repo.StateDir, "fold.json") }

// SnapshotDir holds the fold snapshot's file of each agent.
func (s *Store) SnapshotDir() string { return filepath.Join(s.Repo.StateDir, "fold.d") }

// ownPath is agent id's file of the snapshot; the id is checked first
// (ids.ValidAgent), so it is one plain name.
func (s *Store) ownPath(id string) string { return filepath.Join(s.SnapshotDir(), id+".json") }

// foldEvery is how many records a lock holder folds after the snapshot
// (or in a log without one) before it writes a new snapshot: below it a
// fold costs less than writing one would.
// VENOM_TEST_FOLD_EVERY, the command's or else the process's, sets it.
func foldEvery(environ []string) int64 {
	n := testhook.IntIn(environ, "VENOM_TEST_FOLD_EVERY")
	if n == 0 {
		n = testhook.Int("VENOM_TEST_FOLD_EVERY")
	}
	if n > 0 {
		return int64(n)
	}
	return 1000
}

// loadSnapshot reads fold.json, or returns nil when there is no usable one
// (which is no error: the log is folded whole). Every agent is a stub.
func (s *Store) loadSnapshot() (*agents.State, *journal.Resume) {
	data, err := readWhole(s.SnapshotPath(), s.snapshotCap())
	if err != nil {
		return nil, nil
	}
	testhook.Counted("fold-read-all", 1)
	head, body, found := bytes.Cut(data, []byte("\n"))
	var f snapshotHead
	if !found || json.Unmarshal(head, &f) != nil || f.Format != allFormat || f.Agent != "" {
		return nil, nil
	}
	st, err := agents.UnmarshalAll(bytes.TrimSuffix(body, []byte("\n")))
	if err != nil {
		return nil, nil
	}
	return st, &f.Log
}

// own is an agent's file of the snapshot, as read.
type own struct {
	st       *agents.State // the agent alone, as of its mark
	mark     journal.Resume
	complete int64
}

// loadOwn reads agent id's file, or returns nil when there is no usable
// one.
func (s *Store) loadOwn(id string) *own {
	if !ids.ValidAgent(id) {
		return nil
	}
	data, err := readWhole(s.ownPath(id), s.snapshotCap())
	if err != nil {
		return nil
	}
	testhook.Counted("fold-read-agent", 1)
	head, rest, found := bytes.Cut(data, []byte("\n"))
	var f snapshotHead
	if !found || json.Unmarshal(head, &f) != nil || f.Format != ownFormat || f.Agent != id {
		return nil
	}
	body, ends, found := bytes.Cut(rest, []byte("\n"))
	if !found {
		return nil
	}
	st, complete, err := agents.UnmarshalOwn(id, agents.Part{Body: body, Ends: ends})
	if err != nil {
		return nil
	}
	return &own{st: st, mark: f.Log, complete: complete}
}

// loader folds stub agents whole for st (agents.Loader): from each one's
// file, with its records after the file's mark, or from the log's first
// record when the file is missing, of another log, or does not agree
// with st. It notes in s.marks what a lock holder must write again.
func (s *Store) loader(st *agents.State) agents.Loader {
	return func(id string, lastSeq, upto int64) (*agents.Agent, error) {
		got, err := s.foldOwn([]string{id}, map[string]int64{id: lastSeq}, upto)
		if err != nil {
			return nil, err
		}
		if g := got[id]; g != nil {
			st.RaiseComplete(g.a.Tree, g.complete)
			return g.a, nil
		}
		return nil, errors.New("agent " + id + " is not in the log")
	}
}

// folded is an agent folded whole by foldOwn.
type folded struct {
	a        *agents.Agent
	complete int64
}

// foldOwn folds the agents ids whole through seq upto, lastSeq being the
// seq of each one's last record there: from their files, and for those
// with records after their file's mark, one read of the log from the
// earliest such mark.
func (s *Store) foldOwn(list []string, lastSeq map[string]int64, upto int64) (map[string]*folded, error) {
	out := map[string]*folded{}
	stale := map[string]*own{}
	var from *journal.Resume
	for _, id := range list {
		o := s.loadOwn(id)
		if o == nil || o.mark.Last > upto || o.mark.Check(s.Repo.Log) != nil {
			// None, or not of this log as read (a reader behind a
			// writer): fold the agent from the first record.
			s.note(id, 0, 0)
			continue
		}
		a := o.st.Agents[id]
		if a.LastSeq == lastSeq[id] && lastSeq[id] <= o.mark.Last {
			o.st.Settle()
			o.st.DecodeRepos()
			out[id] = &folded{a: a, complete: o.complete}
			s.note(id, o.mark.Last, 0)
			continue
		}
		stale[id] = o
		if from == nil || o.mark.Offset < from.Offset {
			m := o.mark
			from = &m
		}
	}
	if from != nil {
		opts := journal.ScanOptions{LazyRepos: true}
		if len(stale) == 1 {
			for id := range stale {
				opts.Agent = id
			}
		}
		l, err := journal.ResumeScan(s.Repo.Log, *from, opts, func(e *journal.Entry) {
			if o := stale[e.Agent]; o != nil && e.Seq > o.mark.Last && e.Seq <= upto {
				o.st.Apply(e)
			}
		})
		switch {
		case errors.Is(err, journal.ErrResumeMismatch):
		case err != nil:
			return nil, err
		default:
			for id, o := range stale {
				a := o.st.Agents[id]
				if a.LastSeq != lastSeq[id] {
					continue // does not agree: from the first record
				}
				o.st.Settle()
				o.st.DecodeRepos()
				out[id] = &folded{a: a, complete: o.complete}
				s.note(id, 0, l.Lines()-o.mark.Lines)
			}
		}
	}
	var rest []string
	for _, id := range list {
		if out[id] == nil {
			rest = append(rest, id)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	// From the first record: the agents' records only.
	sts := map[string]*agents.State{}
	opts := journal.ScanOptions{LazyRepos: true}
	for _, id := range rest {
		sts[id] = agents.New()
		opts.Agent = id
	}
	if len(rest) > 1 {
		opts.Agent = ""
	}
	l, err := journal.ScanWith(s.Repo.Log, opts, func(e *journal.Entry) {
		if st := sts[e.Agent]; st != nil && e.Seq <= upto {
			st.Apply(e)
		}
	})
	if err != nil {
		return nil, err
	}
	for id, st := range sts {
		st.Settle()
		st.DecodeRepos()
		if a := st.Agents[id]; a != nil {
			out[id] = &folded{a: a}
			s.note(id, 0, l.Lines())
		}
	}
	return out, nil
}

// note records what was read of agent id's file: the last seq of its
// mark when it was current (0: it must be written again), and how many
// lines of the log were read to fold it on.
func (s *Store) note(id string, current, lines int64) {
	if s.marks == nil {
		s.marks = map[string]int64{}
	}
	s.marks[id] = current
	s.scanned = max(s.scanned, lines)
}

// loadAll makes every stub agent of st whole, with one read of the log
// for all those whose files lag.
func (s *Store) loadAll(st *agents.State) error { return s.Load(st, st.Order) }

// Load makes the stub agents of st among ids whole, as State.Load does
// each, with one read of the log for all those whose files lag.
func (s *Store) Load(st *agents.State, ids []string) error {
	var list []string
	lastSeq := map[string]int64{}
	for _, id := range ids {
		if st.Stub(id) {
			list = append(list, id)
			lastSeq[id] = st.Agents[id].LastSeq
		}
	}
	if len(list) == 0 {
		return nil
	}
	got, err := s.foldOwn(list, lastSeq, st.Last())
	if err != nil {
		return err
	}
	// Load takes each from got: the loader is only called for these.
	prev := s.loader(st)
	st.SetLoader(func(id string, last, upto int64) (*agents.Agent, error) {
		if g := got[id]; g != nil {
			st.RaiseComplete(g.a.Tree, g.complete)
			return g.a, nil
		}
		return prev(id, last, upto)
	})
	defer st.SetLoader(prev)
	for _, id := range list {
		if err := st.Load(id); err != nil {
			return err
		}
	}
	return nil
}

// writeSnapshot replaces the snapshot with the fold st of l, as l stands
// (nothing appended since the fold): fold.json, then the files of the
// agents whole in st whose files lag (s.marks) and that the command is
// about (s.only: a hook writes its own agent's, not two thousand others'
// it had to fold whole for want of a fold.json). A failure or a crash
// leaves old files, or none, each true of the log up to its mark, which
// costs the next command a longer fold and nothing else.
func (s *Store) writeSnapshot(l *journal.Log, st *agents.State) error {
	mark, err := l.Resume()
	if err != nil {
		return err
	}
	want := func(a *agents.Agent) bool {
		if s.only != "" && a.ID != s.only {
			return false
		}
		cur, ok := s.marks[a.ID]
		return !ok || cur == 0 || a.LastSeq > cur
	}
	st.KeepRecent = testhook.IntIn(s.Environ, "VENOM_TEST_FOLD_RECENT")
	// fold.json first: the agents' files are then what is left to do,
	// and a command stopped meanwhile leaves them to be read from the log.
	none := func(*agents.Agent) bool { return false }
	all, err := st.MarshalEach(l.LastSeq(), none, nil)
	if err != nil {
		return err
	}
	head, err := json.Marshal(&snapshotHead{Format: allFormat, Log: mark})
	if err != nil {
		return err
	}
	if err := s.install(s.SnapshotPath(), append(append(append(head, '\n'), all...), '\n'), "fold-snapshot"); err != nil {
		return err
	}
	made := false
	_, err = st.MarshalEach(l.LastSeq(), want, func(id string, p agents.Part) error {
		if !ids.ValidAgent(id) {
			return nil
		}
		if !made {
			if err := statefile.MkdirAll(s.SnapshotDir()); err != nil {
				return err
			}
			made = true
		}
		head, err := json.Marshal(&snapshotHead{Format: ownFormat, Agent: id, Log: mark})
		if err != nil {
			return err
		}
		data := append(append(append(append(head, '\n'), p.Body...), '\n'), p.Ends...)
		if err := s.install(s.ownPath(id), data, ""); err != nil {
			return err
		}
		s.note(id, mark.Last, 0)
		return nil
	})
	return err
}

// install writes data to path through a temporary file renamed over it;
// point names the test points around the rename ("": none).
func (s *Store) install(path string, data []byte, point string) error {
	f, err := statefile.CreateTemp(s.TmpDir(), "fold-*.json")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && point != "" {
		err = testhook.Point(point + "-written")
	}
	if err == nil {
		err = statefile.Rename(f.Name(), path)
	}
	if err != nil {
		_ = statefile.Remove(f.Name())
		return err
	}
	if point != "" {
		return testhook.Point(point + "-installed")
	}
	return nil
}

// foldFrom folds the log into a State: from the snapshot when there is a
// usable one, the records after its mark; else from the first record.
// With the snapshot, the agent only (or every agent, "") is whole, and the
// others are stubs, loaded when read (agents.Stub); without it, filter
// reads only that agent's records. tail is how many records it folded
// from the log.
func (s *Store) foldFrom(only string, filter, useSnapshot bool, watch func(*journal.Entry)) (l *journal.Log, st *agents.State, tail int64, err error) {
	opts := journal.ScanOptions{LazyRepos: true}
	s.marks, s.scanned, s.only = nil, 0, only
	defer func() {
		if st != nil {
			st.Here = s.Repo.Top
			if id, stale := worktreeid.Of(s.Repo.Top, s.Repo.GitDir, s.Repo.CommonDir); stale == nil {
				st.HereWorktree = &id
			}
		}
	}()
	each := func(e *journal.Entry) {
		tail++
		st.Apply(e)
		if watch != nil {
			watch(e)
		}
	}
	if useSnapshot {
		var mark *journal.Resume
		if st, mark = s.loadSnapshot(); st != nil {
			st.SetLoader(s.loader(st))
			if watch != nil {
				// What watchers wait for of the records the snapshot
				// stands for: each agent's registration.
				for _, id := range st.Order {
					a := st.Agents[id]
					watch(&journal.Entry{Seq: a.RegisteredAt, Type: journal.AgentRegistered, Agent: a.ID,
						Tree: a.Tree, Isolation: a.Isolation, Harness: a.Harness})
				}
			}
			l, err = journal.ResumeScan(s.Repo.Log, *mark, opts, each)
			if err == nil {
				if only == "" {
					err = s.loadAll(st)
				} else {
					err = st.Load(only)
				}
			}
			if !errors.Is(err, journal.ErrResumeMismatch) {
				return l, st, tail, err
			}
			tail = 0
			s.marks, s.scanned = nil, 0
		}
	}
	if filter {
		opts.Agent = only
	}
	st = agents.New()
	l, err = journal.ScanWith(s.Repo.Log, opts, each)
	return l, st, tail, err
}

// Whole replaces the transaction's fold with one of the whole log, for
// work that reads history older than a fold snapshot holds
// (agents.State.Partial). The log is the lock holder's, appends included.
func (t *Txn) Whole() error {
	_, st, _, err := t.Store.fold("", false, false, nil)
	if err != nil {
		return err
	}
	t.State = st
	return nil
}

// snapshotSlack is what a snapshot may hold beyond the log's size: a fold
// of few records is still a few kilobytes of agents and turn ends.
const snapshotSlack = 16 << 20

// snapshotCap is the largest snapshot file worth reading: a fold holds
// less than the records it folds, so a bigger file (a planted sparse
// terabyte would be allocated whole and kill every command) is not one we
// wrote.
func (s *Store) snapshotCap() int64 {
	var size int64
	if fi, err := os.Lstat(s.Repo.Log); err == nil {
		size = fi.Size()
	}
	return size + snapshotSlack
}

// errSnapshotSize refuses a snapshot over snapshotCap.
var errSnapshotSize = errors.New("the fold snapshot is larger than the log it folds")

// readWhole reads the state file at path as statefile.Open opens it, into
// one buffer of its size (a snapshot is a megabyte or more: grown bit by
// bit, it would cost several times that in fresh memory), if that size is
// at most limit.
func readWhole(path string, limit int64) ([]byte, error) {
	f, err := statefile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, errSnapshotSize
	}
	data := make([]byte, fi.Size())
	n, err := io.ReadFull(f, data)
	if err != nil {
		return nil, err
	}
	testhook.Counted("fold-bytes-read", n)
	return data[:n], nil
}
