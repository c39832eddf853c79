// Package state opens a repository's venom state for a command: the lock,
// the journal and its fold. Every command that writes runs inside a Txn; one
// that only reads folds the journal without the lock.
package state

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/packset"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
)

// Store is one repository's venom state.
type Store struct {
	Repo    *repo.Repo
	Config  config.Config
	Environ []string
	// Damaged, when set, is called with the log after every read that
	// finds damage inside it (journal.Log.Damage); the command goes on
	// with the whole records.
	Damaged func(*journal.Log)
	// LockWait, when set, is told who holds the lock when Begin has to
	// wait for it, and its result is called when the wait ends.
	LockWait func(lock.Holder) (stop func())
	// marks is, by agent, the last seq of the mark of its snapshot file
	// when the last fold found it current, 0 when it must be written
	// again; scanned is the most lines of the log that fold read to fold
	// an agent on from its file (snapshot.go).
	marks   map[string]int64
	scanned int64
	// only is the agent the last fold was for ("": every agent).
	only string
}

// TmpDir holds temporary index files; only lock holders write it.
func (s *Store) TmpDir() string { return filepath.Join(s.Repo.StateDir, "tmp") }

// PendingDir holds the marks of processes waiting to capture (docs/checkpoints.md#agents-turns-and-states).
func (s *Store) PendingDir() string { return filepath.Join(s.Repo.StateDir, "pending") }

// Read folds the journal without taking the lock. The log it returns holds
// no entries: the fold is made as the records are read.
func (s *Store) Read() (*journal.Log, *agents.State, error) { return s.ReadWatching(nil) }

// ReadAgent folds what a command about one agent reads: that agent whole,
// the others as stubs (agents.Stub) loaded when read, from a fold
// snapshot; without one, only the records of that agent, which is enough
// for what is the agent's alone (its checkpoints, turns and state), not
// for what other agents' records bear on (windows of a shared tree,
// sharers, guards).
func (s *Store) ReadAgent(agent string) (*agents.State, error) {
	_, st, _, err := s.fold(agent, true, true, nil)
	return st, err
}

// ReadStubs folds every agent as a stub when a fold snapshot allows
// (agents.Stub): enough to choose an agent by its binding or tree.
func (s *Store) ReadStubs() (*agents.State, error) {
	_, st, _, err := s.fold(noAgent, false, true, nil)
	return st, err
}

// noAgent is no agent's id: a fold in which no agent is made whole.
const noAgent = "/"

// ReadWatching is Read that also shows watch each record once it is
// folded, so that a caller can start work as soon as the record it waits
// for is read.
func (s *Store) ReadWatching(watch func(*journal.Entry)) (*journal.Log, *agents.State, error) {
	l, st, _, err := s.fold("", false, true, watch)
	return l, st, err
}

// ReadWhole folds every record of the log, passing over the fold snapshot
// (doctor: what checks the log reads all of it).
func (s *Store) ReadWhole() (*journal.Log, *agents.State, error) {
	l, st, _, err := s.fold("", false, false, nil)
	return l, st, err
}

// fold reads the log into a State, from the fold snapshot when there is a
// usable one (snapshot.go): with only "", every agent whole; else that
// agent whole and the others stubs (or, with filter and no snapshot, that
// agent's records alone). The checkpoints' repos stay text while the log
// is read and are decoded at the end for the live ones only
// (journal.ScanOptions.LazyRepos). tail is how many records were folded
// from the log after the snapshot's mark.
func (s *Store) fold(only string, filter, useSnapshot bool, watch func(*journal.Entry)) (*journal.Log, *agents.State, int64, error) {
	l, st, tail, err := s.foldFrom(only, filter, useSnapshot, watch)
	if err != nil {
		return nil, nil, 0, Failed("read", s.Repo.Log, err)
	}
	st.Settle()
	st.DecodeRepos()
	if l.Damaged() > 0 && s.Damaged != nil {
		s.Damaged(l)
	}
	return l, st, tail, nil
}

// Txn is a command holding the lock, with the journal loaded and folded.
type Txn struct {
	Store *Store
	Log   *journal.Log
	State *agents.State
	lock  *lock.Lock
	// readsOn: the command reads the packs it wrote after End (KeepPacks).
	readsOn bool
}

// KeepPacks leaves the packs the transaction writes held past End, for
// a command that reads what it captured after it lets go of the lock
// and makes no ref of it (a diff with the current files): it lets go of
// them itself (packset.Release) after its last read.
func (t *Txn) KeepPacks() { t.readsOn = true }

// Begin takes the lock (waiting until ctx ends), loads the journal and
// settles what a dead process left: temporary files, and a rollback that
// started and never ended (docs/rollback.md#failures).
func (s *Store) Begin(ctx context.Context, who lock.Holder, timeoutCode errcode.Code) (*Txn, error) {
	return s.BeginFor(ctx, who, timeoutCode, "")
}

// BeginFor is Begin for work on one agent: that agent is whole in the
// fold, the others are stubs, loaded when read (ReadAgent). "" is every
// agent.
func (s *Store) BeginFor(ctx context.Context, who lock.Holder, timeoutCode errcode.Code, agent string) (*Txn, error) {
	l, err := lock.AcquireWaiting(ctx, s.Repo.Lock, who, s.LockWait)
	if err != nil {
		if why, ok := interrupt.From(err); ok {
			return nil, interrupt.Coded(why, "stopped while waiting for the repository's venom lock; nothing was done")
		}
		if lock.IsHeld(err) {
			h, _ := lock.HolderOf(err)
			e := errcode.Newf(timeoutCode, map[string]string{"repo": "."},
				"the repository's venom lock was not free within venom.timeout").Wrap(err)
			if h.PID != 0 {
				e.Hint("held by %s", h)
			}
			return nil, e
		}
		return nil, Failed("take", s.Repo.Lock, err)
	}
	t := &Txn{Store: s, lock: l}
	var tail int64
	t.Log, t.State, tail, err = s.fold(agent, false, true, nil)
	if err != nil {
		l.Release()
		return nil, err
	}
	_ = statefile.RemoveAll(s.TmpDir())
	if every := foldEvery(s.Environ); tail >= every || s.scanned >= every {
		// A cache: when it cannot be written, the next command folds more.
		_ = s.writeSnapshot(t.Log, t.State)
	}
	if err := t.settleInterrupted(); err != nil {
		l.Release()
		return nil, err
	}
	return t, nil
}

// BeginStubs is BeginFor with every agent but agent ("": none) a stub,
// for work that reads every agent's stub (agents.Kept above all) to
// choose those it loads whole (Load).
func (s *Store) BeginStubs(ctx context.Context, who lock.Holder, timeoutCode errcode.Code, agent string) (*Txn, error) {
	if agent == "" {
		agent = noAgent
	}
	return s.BeginFor(ctx, who, timeoutCode, agent)
}

// settleInterrupted logs rollback.ended {ok: false, failed.rollback_interrupted}
// for every rollback whose process died, and writes nothing to any tree.
func (t *Txn) settleInterrupted() error {
	for _, id := range t.State.Order {
		a := t.State.Agents[id]
		if a.OpenRollback == nil {
			continue
		}
		ok := false
		rec := map[string]any{
			"agent": a.ID, "checkpoint": a.OpenRollback.Checkpoint, "safety": a.OpenRollback.Safety,
			"restore": a.OpenRollback.Restore, "ok": ok, "code": string(errcode.FailedRollbackInterrupted),
		}
		if r := a.OpenRollback.Revert; r != "" {
			rec["revert"] = r // a revert's end, not a checkpoint it went back to
		}
		_, err := t.Append(journal.RollbackEnded, rec)
		if err != nil {
			return err
		}
	}
	return nil
}

// Append writes one record and folds it in.
func (t *Txn) Append(typ string, payload any) (journal.Entry, error) {
	e, err := t.Log.Append(typ, payload)
	if err != nil {
		return e, Failed("write", t.Log.Path(), err)
	}
	t.State.Apply(&e)
	t.State.Settle()
	return e, nil
}

// End removes the temporary files, which a git killed by a timeout can
// leave (an index's .lock), lets go of the packs the transaction wrote
// (their refs are made: packset.Hold), and releases the lock.
func (t *Txn) End() {
	if t != nil {
		// Past ReleaseAll, the next holder's files may be there.
		t.lock.Guard()
		_ = statefile.RemoveAll(t.Store.TmpDir())
		if !t.readsOn {
			packset.Release()
		}
		t.lock.Release()
	}
}

// Failed is failed.state for a state file that could not be read, taken
// or written, saying why: a link, FIFO or device found on the way is named
// (statefile refuses them, and nothing was read or written through them).
func Failed(verb, path string, err error) *errcode.Error {
	return errcode.Newf(errcode.FailedState, nil, "cannot %s %s: %s", verb, path, why(err)).Wrap(err)
}

func why(err error) string {
	var nr *statefile.NotRegularError
	if errors.As(err, &nr) {
		return nr.Error() + ", and is neither followed nor written through"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Intact refuses work that must not be done on the word of a damaged log
// (journal.Log.Damage): a checkpoint, turn or edit whose record is damaged
// is missing from the fold, so a ref looks like no one's and a person's
// edit can look like an agent's. Deleting refs (prune, clean) and rolling
// back wait until a person has mended the log; doctor says how. what ends
// the message: "no ref is deleted", "no rollback runs".
func Intact(l *journal.Log, what string) error {
	if l.Damaged() == 0 {
		return nil
	}
	lines := []int64{}
	for _, d := range l.Damage() {
		lines = append(lines, d.Line)
	}
	return errcode.Newf(errcode.FailedState, map[string]any{"log": l.Path(), "lines": lines},
		"%s has damage inside (%s): %s until it is mended", l.Path(), l.DamageText(1), what).
		Hint("git venom-checkpoint doctor lists the damaged lines and says how to mend them")
}
