package agents

import (
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
)

// A fold loaded from a split snapshot (lib/state) holds every agent, but
// only those a command names have turns and checkpoints; the others are
// stubs holding what other agents' work reads (tree, isolation, state,
// open turn, binding, notes, rollbacks), so a hook costs its own agent's
// history. A stub folds later records into those members (applyStub) and
// is loaded whole by the State's Loader when its history is read.

// stub is what a stub agent keeps of its checkpoints.
type stub struct {
	// oldestLive is the seq of its oldest live checkpoint when its part
	// was written (0: none), for the floors (snapshot.go): a checkpoint
	// pruned since only keeps the floor lower, which keeps more history.
	oldestLive int64
	owner      *State
	// kept is what its live checkpoints come to, nil when that is not
	// known without loading it (kept.go).
	kept *Kept
}

// Loader folds one agent whole, through the record of seq upto, whose
// last record has seq lastSeq: an Agent of its own State (New, Apply,
// Settle, DecodeRepos).
type Loader func(id string, lastSeq, upto int64) (*Agent, error)

// SetLoader sets what loads a stub agent.
func (s *State) SetLoader(fn Loader) { s.loader = fn }

// Stub reports whether agent id is a stub.
func (s *State) Stub(id string) bool {
	a := s.Agents[id]
	return a != nil && a.stub != nil
}

// Last is the highest seq the fold read.
func (s *State) Last() int64 { return s.last }

// need loads a stub agent before its turns or checkpoints are read. A
// load that fails leaves it a stub, which has none: the Loader falls back
// to the log itself, so only a log that cannot be read gets here, and the
// command's own read of it fails too.
func (a *Agent) need() {
	if a.stub != nil && a.stub.owner != nil {
		_ = a.stub.owner.Load(a.ID)
	}
}

// Load makes agent id whole, if it is a stub.
func (s *State) Load(id string) error {
	a := s.Agents[id]
	if a == nil || a.stub == nil {
		return nil
	}
	if s.loader == nil {
		return errNoLoader
	}
	h, err := s.loader(id, a.LastSeq, s.last)
	if err != nil {
		return err
	}
	// What the agent's own records make (its turns, checkpoints, open
	// turn) is the whole fold's; what other agents' records make of it
	// (a sharer's rollback note) only the stub has.
	a.Turns, a.OpenTurn, a.Checkpoints, a.byID, a.turnByID, a.forgot = h.Turns, h.OpenTurn, h.Checkpoints, h.byID, h.turnByID, h.forgot
	if a.byID == nil {
		a.byID = map[string]*Checkpoint{}
	}
	a.LastTurnN, a.LastCkptN = max(a.LastTurnN, h.LastTurnN), max(a.LastCkptN, h.LastCkptN)
	a.stub = nil
	return nil
}

type loadError string

func (e loadError) Error() string { return string(e) }

const errNoLoader = loadError("a stub agent and no loader")

// oldestLive is the seq of the agent's oldest live checkpoint, or 0.
func (a *Agent) oldestLive() int64 {
	if a.stub != nil {
		return a.stub.oldestLive
	}
	for _, c := range a.Checkpoints {
		if c.Live() {
			return c.Seq
		}
	}
	return 0
}

// applyStub is Apply for a stub: what the record makes of the members a
// stub has, as Apply makes them.
func (s *State) applyStub(a *Agent, e *journal.Entry) {
	if s.applyHead(a, e) {
		return
	}
	switch e.Type {
	case journal.TurnStarted:
		id := deref(e.Turn)
		t := a.OpenTurn
		if t == nil || t.ID != id {
			n, _ := ids.ParseTurn(id)
			t = &Turn{ID: id, N: n}
		}
		t.Started, t.StartSeq, t.StartTs = true, e.Seq, e.Ts
		if e.HarnessTurn != "" {
			t.HarnessTurn = e.HarnessTurn
		}
		if e.HarnessSession != nil && *e.HarnessSession != "" {
			t.Session = *e.HarnessSession
		}
		t.Process = e.Process
		a.OpenTurn = t
		a.LastTurnN = max(a.LastTurnN, t.N)
		if a.State != Archived {
			a.State = Running
		}
	case journal.TurnEnded:
		id := deref(e.Turn)
		if n, err := ids.ParseTurn(id); err == nil {
			a.LastTurnN = max(a.LastTurnN, n)
		}
		if a.OpenTurn != nil && a.OpenTurn.ID == id {
			a.OpenTurn = nil
		}
		if a.State == Running {
			a.State = Settled
		}
	case journal.CheckpointTaken:
		a.stub.keepTaken(a, e)
		n, _ := ids.ParseCheckpoint(e.Checkpoint)
		a.LastCkptN = max(a.LastCkptN, n)
		if a.stub.oldestLive == 0 {
			a.stub.oldestLive = e.Seq
		}
		if t := a.OpenTurn; t != nil && e.Reason == "turn_start" && e.Turn != nil && *e.Turn == t.ID {
			t.StartCheckpoint = e.Checkpoint
		}
		a.handOver(e.Reason)
	case journal.CheckpointReused, journal.CheckpointFailed:
		if t := a.OpenTurn; t != nil && e.Type == journal.CheckpointReused && e.Reason == "turn_start" &&
			e.Turn != nil && *e.Turn == t.ID {
			t.StartCheckpoint = e.Checkpoint
		}
		a.handOver(e.Reason)
	case journal.CheckpointPruned, journal.CheckpointRemoved:
		a.stub.keepGone(e)
	}
}
