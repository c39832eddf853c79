package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// The fold snapshot is the fold of the log through some record, kept in
// fold.json beside log.jsonl with the mark it covers (journal.Resume: the
// byte offset, the seq, the damage found before it and a fingerprint of the
// bytes there), so that a command folds only the records after it: on a
// log of a million records, a list reads a few kilobytes, not 180 MB.
//
// The log stays the truth (docs/checkpoints.md#the-log): a snapshot that is missing, not a
// regular file (a link is never followed), unreadable, of another format,
// or whose mark does not match the log's bytes (a log rewritten, cut or
// replaced beneath it) is passed over, the log is folded whole, and the next
// command holding the lock writes a new one. It is written whole to a
// temporary file and renamed over the old one, so a crash at any point
// leaves the old snapshot or the new, each true of the log up to its mark.
// Only lock holders write it (Begin), when the records they had to fold
// after the snapshot number foldEvery or more: readers never write.
const snapshotFormat = "git-venom fold 3"

// The file is three parts: a line of JSON, snapshotHead, saying what it
// is and the mark it covers; a line of JSON, the fold
// (agents.MarshalSnapshot's body); and the turn ends, which need no parse
// (its ends). Each JSON line is parsed once.
type snapshotHead struct {
	Format string         `json:"format"`
	Log    journal.Resume `json:"log"`
}

// SnapshotPath is the fold snapshot's file.
func (s *Store) SnapshotPath() string { return filepath.Join(s.Repo.StateDir, "fold.json") }

// foldEvery is how many records a lock holder folds after the snapshot
// (or in a log without one) before it writes a new snapshot: below it a
// fold costs less than writing one would.
func foldEvery() int64 {
	if n := testhook.Int("VENOM_TEST_FOLD_EVERY"); n > 0 {
		return int64(n)
	}
	return 1000
}

// loadSnapshot reads the snapshot, or returns nil when there is no usable
// one (which is no error: the log is folded whole).
func (s *Store) loadSnapshot() (*agents.State, *journal.Resume) {
	data, err := readWhole(s.SnapshotPath(), s.snapshotCap())
	if err != nil {
		return nil, nil
	}
	head, rest, found := bytes.Cut(data, []byte("\n"))
	var f snapshotHead
	if !found || json.Unmarshal(head, &f) != nil || f.Format != snapshotFormat {
		return nil, nil
	}
	body, ends, found := bytes.Cut(rest, []byte("\n"))
	if !found {
		return nil, nil
	}
	st, err := agents.UnmarshalSnapshot(body, ends)
	if err != nil {
		return nil, nil
	}
	return st, &f.Log
}

// writeSnapshot replaces the snapshot with the fold st of l, as l stands
// (nothing appended since the fold). A failure leaves the old snapshot,
// or none, which costs the next command a longer fold and nothing else.
func (s *Store) writeSnapshot(l *journal.Log, st *agents.State) error {
	mark, err := l.Resume()
	if err != nil {
		return err
	}
	body, ends, err := st.MarshalSnapshot(l.LastSeq())
	if err != nil {
		return err
	}
	data, err := json.Marshal(&snapshotHead{Format: snapshotFormat, Log: mark})
	if err != nil {
		return err
	}
	data = append(append(append(append(data, '\n'), body...), '\n'), ends...)
	f, err := statefile.CreateTemp(s.TmpDir(), "fold-*.json")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = testhook.Point("fold-snapshot-written")
	}
	if err == nil {
		err = statefile.Rename(f.Name(), s.SnapshotPath())
	}
	if err != nil {
		_ = statefile.Remove(f.Name())
		return err
	}
	return testhook.Point("fold-snapshot-installed")
}

// foldFrom folds the log into a State: from the snapshot when there is a
// usable one, the records after its mark; else from the first record. tail
// is how many records it folded from the log.
func (s *Store) foldFrom(agent string, useSnapshot bool, watch func(*journal.Entry)) (l *journal.Log, st *agents.State, tail int64, err error) {
	opts := journal.ScanOptions{Agent: agent, LazyRepos: true}
	defer func() {
		if st != nil {
			st.Here = s.Repo.Top
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
			if !errors.Is(err, journal.ErrResumeMismatch) {
				return l, st, tail, err
			}
			tail = 0
		}
	}
	st = agents.New()
	l, err = journal.ScanWith(s.Repo.Log, opts, each)
	return l, st, tail, err
}

// Whole replaces the transaction's fold with one of the whole log, for
// work that reads history older than a fold snapshot holds
// (agents.State.Partial). The log is the lock holder's, appends included.
func (t *Txn) Whole() error {
	_, st, _, err := t.Store.fold("", false, nil)
	if err != nil {
		return err
	}
	t.State = st
	return nil
}

// snapshotSlack is what a snapshot may hold beyond the log's size: a fold
// of few records is still a few kilobytes of agents and turn ends.
const snapshotSlack = 16 << 20

// snapshotCap is the largest snapshot worth reading: a fold holds less than
// the records it folds, so a bigger file (a planted sparse terabyte would
// be allocated whole and kill every command) is not one we wrote.
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
	return data[:n], nil
}
