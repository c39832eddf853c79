package agents

import (
	"math"
	"sort"

	"github.com/git-venom/git-venom/lib/journal"
)

// Capture is one capture of a tree as the journal tells it: a checkpoint
// taken, a reuse (docs/checkpoints.md#reuse) or a failure. The window walk of docs/rollback.md#classes runs
// over these, by any agent using the tree (docs/rollback.md#classes).
type Capture struct {
	Seq        int64
	Agent      string
	Checkpoint string // "" for a failed capture
	Reason     string
	Turn       string
	// Commit is the checkpoint commit; "" when the capture failed, or its
	// checkpoint was pruned or removed. Such a capture is a barrier: the
	// windows around it merge into one gap (docs/checkpoints.md#retention-and-clean).
	Commit string
}

// Barrier reports whether the capture has no tree to compare.
func (c Capture) Barrier() bool { return c.Commit == "" }

// Window kinds (docs/rollback.md#classes).
const (
	TurnWindow     = "turn"
	RollbackWindow = "rollback"
	GapWindow      = "gap"
)

// Window is two consecutive usable captures of one tree.
type Window struct {
	From, To Capture
	Kind     string
	Turn     string // the agent's turn, for a turn window
	// Shared: a gap only because other agents' turns ran on the tree
	// while the agent's turn Turn ran throughout (two sessions in one
	// worktree): those turns. A path changed here is the agent's when its
	// own edit records name it and none of theirs does (plan.classify).
	Shared []TurnOf
}

// TurnOf names a turn of some agent.
type TurnOf struct{ Agent, Turn string }

// Captures lists the captures of tree in log order, by every agent
// registered on it.
func (s *State) Captures(tree string) []Capture {
	var out []Capture
	s.captures.each(func(e *captureRecord) {
		a := s.Agents[e.agent]
		if a == nil || a.Tree != tree {
			return
		}
		c := Capture{Seq: e.seq, Agent: e.agent, Checkpoint: e.checkpoint, Reason: e.reason, Turn: e.turn}
		if e.typ != journal.CheckpointFailed {
			if k := a.byID[e.checkpoint]; k != nil && k.Live() && len(k.Repos) == 1 {
				c.Commit = k.Repos[0].Commit
			}
		} else {
			c.Checkpoint = ""
		}
		out = append(out, c)
	})
	return out
}

// span is when one turn ran, in log seqs measured at its captures.
type span struct {
	agent      string
	turn       string
	start, end int64
	started    bool
}

// spans lists a's turns, each from its turn_start capture (or its
// turn.started record) to its turn_end capture (or its turn.ended record);
// a turn with no turn_start runs from the agent's previous capture.
func (s *State) spans(a *Agent) []span {
	// One pass over the log: each turn's captures, and every capture's seq
	// (a log of 100,000 records and 500 turns must not be read 500 times).
	type capture struct {
		seq    int64
		reason string
	}
	byTurn := map[string][]capture{}
	var seqs []int64
	s.captures.each(func(e *captureRecord) {
		if e.agent != a.ID {
			return
		}
		seqs = append(seqs, e.seq)
		if e.turn != "" {
			byTurn[e.turn] = append(byTurn[e.turn], capture{e.seq, e.reason})
		}
	})
	var out []span
	for _, t := range a.Turns {
		sp := span{agent: a.ID, turn: t.ID, start: t.StartSeq, end: math.MaxInt64, started: t.Started}
		if t.Ended {
			sp.end = t.EndSeq
		}
		for _, c := range byTurn[t.ID] {
			if c.reason == "turn_start" && t.Started && c.seq >= t.StartSeq {
				sp.start = c.seq
			}
			if c.reason == "turn_end" && t.Ended && c.seq > t.EndSeq {
				sp.end = c.seq
			}
		}
		if !t.Started {
			// From the agent's last capture before the turn ended.
			sp.start = 0
			if t.Ended {
				if i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= t.EndSeq }); i > 0 {
					sp.start = seqs[i-1]
				}
			}
		}
		out = append(out, sp)
	}
	return out
}

// Windows walks a's tree from the capture at seq from (the target's first
// capture) to the newest, and classes each window (docs/rollback.md#classes, docs/rollback.md#classes).
// Barriers merge their neighbours into one gap. The last window, from the
// newest capture to the current state, is the caller's: always a gap.
func (s *State) Windows(a *Agent, from int64) []Window {
	var all []Capture
	for _, c := range s.Captures(a.Tree) {
		if c.Seq >= from {
			all = append(all, c)
		}
	}
	own := s.spans(a)
	var others []span
	for _, o := range s.Order {
		if b := s.Agents[o]; b.ID != a.ID && b.Tree == a.Tree {
			others = append(others, s.spans(b)...)
		}
	}
	var out []Window
	var prev *Capture
	broken := false
	for i := range all {
		c := all[i]
		if c.Barrier() {
			broken = prev != nil || broken
			continue
		}
		if prev != nil {
			w := Window{From: *prev, To: c, Kind: GapWindow}
			if !broken {
				w.Kind, w.Turn, w.Shared = classify(a, own, others, *prev, c)
			}
			out = append(out, w)
		}
		p := c
		prev, broken = &p, false
	}
	return out
}

// FirstCapture is the oldest usable capture of a's tree at or after seq
// from: where Windows starts.
func (s *State) FirstCapture(a *Agent, from int64) *Capture {
	for _, c := range s.Captures(a.Tree) {
		if c.Seq >= from && !c.Barrier() {
			return &c
		}
	}
	return nil
}

// LastCapture is the newest usable capture of a's tree at or after seq from.
func (s *State) LastCapture(a *Agent, from int64) *Capture {
	var last *Capture
	for _, c := range s.Captures(a.Tree) {
		if c.Seq >= from && !c.Barrier() {
			cp := c
			last = &cp
		}
	}
	return last
}

func classify(a *Agent, own, others []span, from, to Capture) (string, string, []TurnOf) {
	if to.Reason == "rollback" {
		return RollbackWindow, "", nil
	}
	turn := ""
	for _, sp := range own {
		if sp.started && runningAfter(a, sp, from) && runningBefore(a, sp, to) {
			turn = sp.turn
			break
		}
	}
	// Another agent's turn ran during the window: a gap, shared with the
	// agent's own turn when one ran throughout.
	var shared []TurnOf
	for _, sp := range others {
		if sp.start < to.Seq && sp.end > from.Seq {
			shared = append(shared, TurnOf{Agent: sp.agent, Turn: sp.turn})
		}
	}
	switch {
	case shared != nil && turn != "":
		return GapWindow, turn, shared
	case shared != nil || turn == "":
		return GapWindow, "", nil
	}
	return TurnWindow, turn, nil
}

// runningAfter: the turn was running right after capture c.
func runningAfter(a *Agent, sp span, c Capture) bool {
	if c.Agent == a.ID {
		return c.Turn == sp.turn && (c.Reason == "turn_start" || c.Reason == "manual")
	}
	return sp.start < c.Seq && c.Seq < sp.end
}

// runningBefore: the turn was running right before capture c.
func runningBefore(a *Agent, sp span, c Capture) bool {
	if c.Agent == a.ID {
		return c.Turn == sp.turn && (c.Reason == "turn_end" || c.Reason == "manual")
	}
	return sp.start < c.Seq && c.Seq < sp.end
}

// noteSharers gives the rollback note to every other agent on the tree when
// a rollback of a ends well (docs/rollback.md#the-rollback-note).
func (s *State) noteSharers(a *Agent, e *journal.Entry) {
	for _, o := range s.Sharers(a) {
		cp := *e
		o.NotePending = &cp
	}
}
