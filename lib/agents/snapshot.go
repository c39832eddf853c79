package agents

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
)

// A snapshot is the fold as JSON (lib/state keeps one beside the log), with
// the history no command reads left out, so that loading it costs what the
// agents hold now, not what they did in a year:
//
//   - a checkpoint that is pruned or removed, older than the oldest live
//     checkpoint of every agent on its tree (its floor);
//   - a turn that ended before the floor, unless a capture kept names it,
//     or it is the agent's last turn or last ended turn;
//   - capture records and ignored-edit records before the floor.
//
// Why nothing reads them: a rollback's windows, spans and ignored edits
// start at its target's capture, a live checkpoint at or after the floor,
// and compare the seqs of what runs before only with seqs at or after it
// (windows.go); retention, list, last, ~n and the dedup look at live
// checkpoints and the last turns. What is left out is still counted: the
// numbers of the checkpoints and turns left out (Forgot) keep "was pruned"
// and "ended long ago" answers apart from "never existed".
type snapshot struct {
	Agents   []snapAgent   `json:"agents"`
	Captures []snapCapture `json:"captures"`
	Ignored  []snapIgnored `json:"ignored"`
}

type snapAgent struct {
	ID           string           `json:"id"`
	Tree         string           `json:"tree"`
	Isolation    string           `json:"isolation"`
	Harness      string           `json:"harness"`
	Parent       string           `json:"parent"`
	State        string           `json:"state"`
	Turns        []*Turn          `json:"turns"`
	OpenTurn     string           `json:"open_turn"`
	Checkpoints  []snapCheckpoint `json:"checkpoints"`
	Binding      Binding          `json:"binding"`
	NotePending  *journal.Entry   `json:"note_pending"`
	OpenRollback *journal.Entry   `json:"open_rollback"`
	LastRollback *Rollback        `json:"last_rollback"`
	LastTurnN    int              `json:"last_turn_n"`
	LastCkptN    int              `json:"last_ckpt_n"`
	RegisteredAt int64            `json:"registered_at"`
	Forgot       Forgotten        `json:"forgot"`
}

type snapCheckpoint struct {
	journal.Taken
	Seq     int64   `json:"seq"`
	Ts      string  `json:"ts"`
	N       int     `json:"n"`
	Label   *string `json:"label_now"`
	Pruned  bool    `json:"pruned"`
	Removed bool    `json:"removed"`
}

type snapCapture struct {
	Seq        int64  `json:"seq"`
	Type       string `json:"type"`
	Agent      string `json:"agent"`
	Checkpoint string `json:"checkpoint"`
	Reason     string `json:"reason"`
	Turn       string `json:"turn"`
}

type snapIgnored struct {
	Agent string   `json:"agent"`
	Seq   int64    `json:"seq"`
	Paths []string `json:"paths"`
}

// Forgotten is what a snapshot left out of an agent: the numbers of its
// checkpoints and turns, as inclusive ranges.
type Forgotten struct {
	Checkpoints [][2]int `json:"checkpoints"`
	Turns       [][2]int `json:"turns"`
}

func (f *Forgotten) has(ranges [][2]int, n int) bool {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] >= n })
	return i < len(ranges) && ranges[i][0] <= n
}

// ForgotCheckpoint reports whether the agent had checkpoint id, pruned or
// removed long ago, which a snapshot left out of the fold.
func (a *Agent) ForgotCheckpoint(id string) bool {
	n, err := ids.ParseCheckpoint(id)
	return err == nil && a.forgot.has(a.forgot.Checkpoints, n)
}

// ForgotTurn reports whether the agent had turn id, ended long ago, which
// a snapshot left out of the fold.
func (a *Agent) ForgotTurn(id string) bool {
	n, err := ids.ParseTurn(id)
	return err == nil && a.forgot.has(a.forgot.Turns, n)
}

// Had reports whether the agent ever had checkpoint id, live or not.
func (a *Agent) Had(id string) bool { return a.byID[id] != nil || a.ForgotCheckpoint(id) }

// addRanges merges the numbers ns into the sorted ranges rs.
func addRanges(rs [][2]int, ns []int) [][2]int {
	for _, r := range rs {
		for n := r[0]; n <= r[1]; n++ {
			ns = append(ns, n)
		}
	}
	sort.Ints(ns)
	var out [][2]int
	for _, n := range ns {
		if k := len(out); k > 0 && n <= out[k-1][1]+1 {
			out[k-1][1] = max(out[k-1][1], n)
			continue
		}
		out = append(out, [2]int{n, n})
	}
	return out
}

// floors is, for every tree, the seq before which a snapshot may leave
// history out: the oldest live checkpoint or open turn of any agent on it,
// else the seq after last.
func (s *State) floors(last int64) map[string]int64 {
	out := map[string]int64{}
	for _, id := range s.Order {
		a := s.Agents[id]
		f, ok := out[a.Tree]
		if !ok {
			f = last + 1
		}
		for _, c := range a.Checkpoints {
			if c.Live() {
				f = min(f, c.Seq)
				break
			}
		}
		if a.OpenTurn != nil {
			f = min(f, a.OpenTurn.StartSeq)
		}
		out[a.Tree] = f
	}
	return out
}

// MarshalSnapshot renders the state, the fold of the log through seq last,
// as a snapshot (the history no command reads left out).
func (s *State) MarshalSnapshot(last int64) ([]byte, error) {
	floors := s.floors(last)
	floorOf := func(agent string) int64 {
		if a := s.Agents[agent]; a != nil {
			return floors[a.Tree]
		}
		return math.MaxInt64 // a record of no agent: no fold reads it
	}
	var out snapshot
	named := map[string]map[string]bool{} // turns the kept captures name, by agent
	s.captures.each(func(r *captureRecord) {
		if r.seq < floorOf(r.agent) {
			return
		}
		out.Captures = append(out.Captures, snapCapture{Seq: r.seq, Type: r.typ, Agent: r.agent,
			Checkpoint: r.checkpoint, Reason: r.reason, Turn: r.turn})
		if r.turn != "" {
			if named[r.agent] == nil {
				named[r.agent] = map[string]bool{}
			}
			named[r.agent][r.turn] = true
		}
	})
	for _, id := range s.Order {
		for _, e := range s.ignoredEdits[id] {
			if e.seq >= floorOf(id) {
				out.Ignored = append(out.Ignored, snapIgnored{Agent: id, Seq: e.seq, Paths: e.paths})
			}
		}
	}
	for _, id := range s.Order {
		a := s.Agents[id]
		floor := floors[a.Tree]
		sa := snapAgent{ID: a.ID, Tree: a.Tree, Isolation: a.Isolation, Harness: a.Harness, Parent: a.Parent,
			State: a.State, Binding: a.Binding, NotePending: a.NotePending, OpenRollback: a.OpenRollback,
			LastRollback: a.LastRollback, LastTurnN: a.LastTurnN, LastCkptN: a.LastCkptN,
			RegisteredAt: a.RegisteredAt, Turns: []*Turn{}, Checkpoints: []snapCheckpoint{}}
		if a.OpenTurn != nil {
			sa.OpenTurn = a.OpenTurn.ID
		}
		var lastTurn, lastEnded *Turn
		if n := len(a.Turns); n > 0 {
			lastTurn = a.Turns[n-1]
		}
		lastEnded = a.LastEndedTurn()
		var dropped []int
		for _, t := range a.Turns {
			if !t.Ended || t.EndSeq >= floor || named[a.ID][t.ID] || t == lastTurn || t == lastEnded {
				sa.Turns = append(sa.Turns, t)
			} else {
				dropped = append(dropped, t.N)
			}
		}
		sa.Forgot.Turns = addRanges(a.forgot.Turns, dropped)
		dropped = nil
		for _, c := range a.Checkpoints {
			if c.Live() || c.Seq >= floor {
				sa.Checkpoints = append(sa.Checkpoints, snapCheckpoint{Taken: c.Taken, Seq: c.Seq, Ts: c.Ts,
					N: c.N, Label: c.Label, Pruned: c.Pruned, Removed: c.Removed})
			} else {
				dropped = append(dropped, c.N)
			}
		}
		sa.Forgot.Checkpoints = addRanges(a.forgot.Checkpoints, dropped)
		out.Agents = append(out.Agents, sa)
	}
	return json.Marshal(&out)
}

// UnmarshalSnapshot is the state a snapshot holds.
func UnmarshalSnapshot(data []byte) (*State, error) {
	var in snapshot
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	s := New()
	for i := range in.Agents {
		sa := &in.Agents[i]
		if sa.ID == "" || s.Agents[sa.ID] != nil {
			return nil, fmt.Errorf("agent %q is not one new agent", sa.ID)
		}
		a := &Agent{ID: sa.ID, Tree: sa.Tree, Isolation: sa.Isolation, Harness: sa.Harness, Parent: sa.Parent,
			State: sa.State, Binding: sa.Binding, NotePending: sa.NotePending, OpenRollback: sa.OpenRollback,
			LastRollback: sa.LastRollback, LastTurnN: sa.LastTurnN, LastCkptN: sa.LastCkptN,
			RegisteredAt: sa.RegisteredAt, forgot: sa.Forgot,
			byID: map[string]*Checkpoint{}, turnByID: map[string]*Turn{}}
		for _, t := range sa.Turns {
			if t == nil || a.turnByID[t.ID] != nil {
				return nil, fmt.Errorf("agent %s: a turn is missing or twice", a.ID)
			}
			a.Turns = append(a.Turns, t)
			a.turnByID[t.ID] = t
		}
		if sa.OpenTurn != "" {
			if a.OpenTurn = a.turnByID[sa.OpenTurn]; a.OpenTurn == nil {
				return nil, fmt.Errorf("agent %s: open turn %s is not there", a.ID, sa.OpenTurn)
			}
		}
		for j := range sa.Checkpoints {
			sc := &sa.Checkpoints[j]
			if a.byID[sc.Checkpoint] != nil {
				return nil, fmt.Errorf("agent %s: checkpoint %s twice", a.ID, sc.Checkpoint)
			}
			c := &Checkpoint{Taken: sc.Taken, Seq: sc.Seq, Ts: sc.Ts, N: sc.N, Label: sc.Label,
				Pruned: sc.Pruned, Removed: sc.Removed}
			a.Checkpoints = append(a.Checkpoints, c)
			a.byID[c.Checkpoint] = c
		}
		s.Agents[a.ID] = a
		s.Order = append(s.Order, a.ID)
	}
	for _, c := range in.Captures {
		s.captures.add(captureRecord{seq: c.Seq, typ: c.Type, agent: c.Agent, checkpoint: c.Checkpoint,
			reason: c.Reason, turn: c.Turn})
	}
	for _, e := range in.Ignored {
		if s.ignoredEdits == nil {
			s.ignoredEdits = map[string][]ignoredEdit{}
		}
		s.ignoredEdits[e.Agent] = append(s.ignoredEdits[e.Agent], ignoredEdit{e.Seq, e.Paths})
	}
	return s, nil
}
