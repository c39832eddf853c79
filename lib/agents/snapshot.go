package agents

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"sort"

	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// A snapshot is the fold as JSON without the history no command reads
// (checkpoints and turns ended before the floor, the oldest live
// checkpoint, but the last turns and those a kept capture names), so
// loading it costs what agents hold now. Forgot counts what is left out:
// "was pruned" stays apart from "never existed".
type snapshot struct {
	// Complete is, by tree, the seq from which the snapshot holds all
	// its history (State.Partial).
	Complete map[string]int64 `json:"complete"`
	Agents   []snapHead       `json:"agents"`
	Captures []snapCapture    `json:"captures"`
	Ignored  []snapIgnored    `json:"ignored"`
}

// snapHead is what the all-agents part holds of an agent: what a stub
// has (stub.go).
type snapHead struct {
	ID           string         `json:"id"`
	Tree         string         `json:"tree"`
	Worktree     *worktreeid.ID `json:"worktree"`
	Isolation    string         `json:"isolation"`
	Harness      string         `json:"harness"`
	Parent       string         `json:"parent"`
	State        string         `json:"state"`
	OpenTurn     *Turn          `json:"open_turn"`
	Binding      Binding        `json:"binding"`
	NotePending  *journal.Entry `json:"note_pending"`
	OpenRollback *journal.Entry `json:"open_rollback"`
	LastRollback *Rollback      `json:"last_rollback"`
	LastTurnN    int            `json:"last_turn_n"`
	LastCkptN    int            `json:"last_ckpt_n"`
	RegisteredAt int64          `json:"registered_at"`
	LastSeq      int64          `json:"last_seq"`
	OldestLive   int64          `json:"oldest_live"`
	// Kept: null when not known without loading the agent.
	Kept *Kept `json:"kept"`
}

// snapOne is an agent's own part: the agent whole, and the seq from
// which it holds all the history of its tree.
type snapOne struct {
	Complete int64     `json:"complete"`
	Agent    snapAgent `json:"agent"`
}

type snapAgent struct {
	ID           string           `json:"id"`
	Tree         string           `json:"tree"`
	Worktree     *worktreeid.ID   `json:"worktree"`
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
	LastSeq      int64            `json:"last_seq"`
	Forgot       Forgotten        `json:"forgot"`
}

type snapCheckpoint struct {
	journal.Taken
	Seq    int64    `json:"seq"`
	Ts     string   `json:"ts"`
	N      int      `json:"n"`
	Label  *string  `json:"label_now"`
	Labels []string `json:"labels"`
	// ReusedIn: the turns that reused it.
	ReusedIn []string `json:"reused_in,omitempty"`
	Pruned   bool     `json:"pruned"`
	Removed  bool     `json:"removed"`
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
// checkpoints and turns, as inclusive ranges, and which checkpoint each
// turn left out ended with (what t<n> names), kept apart as varints and
// read only when such a turn is named.
type Forgotten struct {
	Checkpoints [][2]int `json:"checkpoints"`
	Turns       [][2]int `json:"turns"`
	// Labels: each label a checkpoint left out was given, with the
	// number of the newest such checkpoint, so that a label only pruned
	// checkpoints had still says where it was.
	Labels map[string]int `json:"labels,omitempty"`
	ends   []byte         // pairs of uvarints: turn n, checkpoint n (0: none)
}

// endPairs decodes ends: turn n to checkpoint n, in turn order.
func (f *Forgotten) endPairs() [][2]int {
	var out [][2]int
	b := f.ends
	for len(b) > 0 {
		t, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return out
		}
		c, k2 := binary.Uvarint(b[k1:])
		if k2 <= 0 {
			return out
		}
		out = append(out, [2]int{int(t), int(c)})
		b = b[k1+k2:]
	}
	return out
}

// ForgottenTurnEnd is the turn_end checkpoint of turn id, which a snapshot
// left out of the fold, or "" when it had none.
func (a *Agent) ForgottenTurnEnd(id string) string {
	a.need()
	n, err := ids.ParseTurn(id)
	if err != nil {
		return ""
	}
	pairs := a.forgot.endPairs()
	i := sort.Search(len(pairs), func(i int) bool { return pairs[i][0] >= n })
	if i < len(pairs) && pairs[i][0] == n && pairs[i][1] > 0 {
		return ids.Checkpoint(pairs[i][1])
	}
	return ""
}

func (f *Forgotten) has(ranges [][2]int, n int) bool {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] >= n })
	return i < len(ranges) && ranges[i][0] <= n
}

// ForgotCheckpoint reports whether the agent had checkpoint id, pruned or
// removed long ago, which a snapshot left out of the fold.
func (a *Agent) ForgotCheckpoint(id string) bool {
	a.need()
	n, err := ids.ParseCheckpoint(id)
	return err == nil && a.forgot.has(a.forgot.Checkpoints, n)
}

// ForgotLabel is the number of the newest checkpoint a snapshot left out
// that was given label l, or 0.
func (a *Agent) ForgotLabel(l string) int {
	a.need()
	return a.forgot.Labels[l]
}

// ForgotTurn reports whether the agent had turn id, ended long ago, which
// a snapshot left out of the fold.
func (a *Agent) ForgotTurn(id string) bool {
	a.need()
	n, err := ids.ParseTurn(id)
	return err == nil && a.forgot.has(a.forgot.Turns, n)
}

// Had reports whether the agent ever had checkpoint id, live or not.
func (a *Agent) Had(id string) bool {
	a.need()
	return a.byID[id] != nil || a.ForgotCheckpoint(id)
}

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

// recentCaptures is how many of a tree's newest captures a snapshot keeps
// with their turns, edits and windows, however old its oldest live
// checkpoint: a rollback to an older one reads the whole log (Partial).
// VENOM_TEST_FOLD_RECENT sets it for tests: the command's (KeepRecent)
// or else the process's.
func (s *State) recentCaptures() int {
	if s.KeepRecent > 0 {
		return s.KeepRecent
	}
	if n := testhook.Int("VENOM_TEST_FOLD_RECENT"); n > 0 {
		return n
	}
	return 512
}

// floors is, for every tree, the seq before which a snapshot leaves history
// out: the oldest live checkpoint or open turn of any agent on it (else the
// seq after last), or, when that is older, the tree's recentCaptures-th
// newest capture.
func (s *State) floors(last int64) map[string]int64 {
	out := map[string]int64{}
	for _, id := range s.Order {
		a := s.Agents[id]
		f, ok := out[a.Tree]
		if !ok {
			f = last + 1
		}
		if seq := a.oldestLive(); seq > 0 {
			f = min(f, seq)
		}
		if a.OpenTurn != nil {
			f = min(f, a.OpenTurn.StartSeq)
		}
		out[a.Tree] = f
	}
	keep := s.recentCaptures()
	recent := map[string][]int64{} // by tree, the newest captures' seqs, a ring
	count := map[string]int{}
	s.captures.each(func(r *captureRecord) {
		a := s.Agents[r.agent]
		if a == nil {
			return
		}
		ring := recent[a.Tree]
		if ring == nil {
			ring = make([]int64, keep)
			recent[a.Tree] = ring
		}
		ring[count[a.Tree]%keep] = r.seq
		count[a.Tree]++
	})
	for tree, n := range count {
		if n >= keep {
			// The oldest of the ring is the keep-th newest.
			out[tree] = max(out[tree], recent[tree][n%keep])
		}
	}
	return out
}

// Partial reports whether the fold may lack history of tree at or after
// seq, that a snapshot left out: a rollback to a checkpoint that old reads
// the whole log instead (state.Store.Whole).
func (s *State) Partial(tree string, seq int64) bool { return seq < s.complete[tree] }

// Part is an agent's own part of a split snapshot: JSON, and the turn_end
// checkpoints of the turns left out, in a form read only when one is named.
type Part struct{ Body, Ends []byte }

// MarshalSplit renders the state, the fold of the log through seq last, as
// a split snapshot (the history no command reads left out): the part of
// all agents (what a stub has of each, the captures and ignored edits the
// windows read), and the own parts of the agents whole for which want
// says so.
func (s *State) MarshalSplit(last int64, want func(*Agent) bool) (all []byte, parts map[string]Part, err error) {
	parts = map[string]Part{}
	all, err = s.MarshalEach(last, want, func(id string, p Part) error {
		parts[id] = p
		return nil
	})
	return all, parts, err
}

// MarshalEach is MarshalSplit giving each own part to emit as it is
// made, so that only one is held at a time.
func (s *State) MarshalEach(last int64, want func(*Agent) bool, emit func(id string, p Part) error) (all []byte, err error) {
	floors := s.floors(last)
	floorOf := func(agent string) int64 {
		if a := s.Agents[agent]; a != nil {
			return floors[a.Tree]
		}
		return math.MaxInt64 // a record of no agent: no fold reads it
	}
	out := snapshot{Complete: floors, Agents: []snapHead{}}
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
		out.Agents = append(out.Agents, snapHead{ID: a.ID, Tree: a.Tree, Worktree: a.Worktree, Isolation: a.Isolation,
			Harness: a.Harness, Parent: a.Parent, State: a.State, OpenTurn: a.OpenTurn, Binding: a.Binding,
			NotePending: a.NotePending, OpenRollback: a.OpenRollback, LastRollback: a.LastRollback,
			LastTurnN: a.LastTurnN, LastCkptN: a.LastCkptN, RegisteredAt: a.RegisteredAt, LastSeq: a.LastSeq,
			OldestLive: a.oldestLive()})
		out.Agents[len(out.Agents)-1].Kept, _ = a.Kept()
		if a.stub != nil || !want(a) {
			continue
		}
		sa, ends := a.marshalOwn(floors[a.Tree], named[a.ID])
		body, err := json.Marshal(&snapOne{Complete: floors[a.Tree], Agent: sa})
		if err != nil {
			return nil, err
		}
		if err := emit(id, Part{Body: body, Ends: ends}); err != nil {
			return nil, err
		}
	}
	return json.Marshal(&out)
}

// marshalOwn is the agent whole, with the history before floor left out
// but for the turns named (by the captures kept, and here by its live
// checkpoints), and the turn ends of the turns left out.
func (a *Agent) marshalOwn(floor int64, named map[string]bool) (snapAgent, []byte) {
	sa := snapAgent{ID: a.ID, Tree: a.Tree, Worktree: a.Worktree, Isolation: a.Isolation, Harness: a.Harness, Parent: a.Parent,
		State: a.State, Binding: a.Binding, NotePending: a.NotePending, OpenRollback: a.OpenRollback,
		LastRollback: a.LastRollback, LastTurnN: a.LastTurnN, LastCkptN: a.LastCkptN,
		RegisteredAt: a.RegisteredAt, LastSeq: a.LastSeq, Turns: []*Turn{}, Checkpoints: []snapCheckpoint{}}
	if a.OpenTurn != nil {
		sa.OpenTurn = a.OpenTurn.ID
	}
	if named == nil {
		named = map[string]bool{}
	}
	// The turns its live checkpoints name (a rewind's through_turn).
	for _, c := range a.Checkpoints {
		if c.Live() {
			for _, t := range []*string{c.Turn, c.ThroughTurn} {
				if t != nil {
					named[*t] = true
				}
			}
		}
	}
	var lastTurn *Turn
	if n := len(a.Turns); n > 0 {
		lastTurn = a.Turns[n-1]
	}
	lastEnded := a.LastEndedTurn()
	var dropped []int
	pairs := a.forgot.endPairs()
	for _, t := range a.Turns {
		if !t.Ended || t.EndSeq >= floor || named[t.ID] || t == lastTurn || t == lastEnded {
			sa.Turns = append(sa.Turns, t)
		} else {
			dropped = append(dropped, t.N)
			k, _ := ids.ParseCheckpoint(t.EndCheckpoint)
			pairs = append(pairs, [2]int{t.N, k})
		}
	}
	sa.Forgot.Turns = addRanges(a.forgot.Turns, dropped)
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	var ends []byte
	for _, p := range pairs {
		ends = binary.AppendUvarint(binary.AppendUvarint(ends, uint64(p[0])), uint64(p[1]))
	}
	dropped = nil
	labels := maps.Clone(a.forgot.Labels)
	for _, c := range a.Checkpoints {
		if c.Live() || c.Seq >= floor {
			sa.Checkpoints = append(sa.Checkpoints, snapCheckpoint{Taken: c.Taken, Seq: c.Seq, Ts: c.Ts,
				N: c.N, Label: c.Label, Labels: c.Labels, ReusedIn: c.ReusedIn, Pruned: c.Pruned, Removed: c.Removed})
			continue
		}
		dropped = append(dropped, c.N)
		for _, l := range c.Labels {
			if labels == nil {
				labels = map[string]int{}
			}
			labels[l] = max(labels[l], c.N)
		}
	}
	sa.Forgot.Labels = labels
	sa.Forgot.Checkpoints = addRanges(a.forgot.Checkpoints, dropped)
	return sa, ends
}

// UnmarshalAll is the state the part of all agents holds: every agent a
// stub, loaded by the State's Loader when read (stub.go).
func UnmarshalAll(data []byte) (*State, error) {
	var in snapshot
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	s := New()
	s.complete = in.Complete
	for i := range in.Agents {
		h := &in.Agents[i]
		if h.ID == "" || s.Agents[h.ID] != nil {
			return nil, fmt.Errorf("agent %q is not one new agent", h.ID)
		}
		if h.OpenTurn != nil && h.OpenTurn.ID == "" {
			return nil, fmt.Errorf("agent %s: its open turn has no id", h.ID)
		}
		if h.Kept != nil && (!h.Kept.valid() || h.Kept.Newest() > h.LastCkptN) {
			return nil, fmt.Errorf("agent %s: its live checkpoints are not ranges of its numbers", h.ID)
		}
		a := &Agent{ID: h.ID, Tree: h.Tree, Worktree: h.Worktree, Isolation: h.Isolation, Harness: h.Harness,
			Parent: h.Parent, State: h.State, OpenTurn: h.OpenTurn, Binding: h.Binding, NotePending: h.NotePending,
			OpenRollback: h.OpenRollback, LastRollback: h.LastRollback, LastTurnN: h.LastTurnN,
			LastCkptN: h.LastCkptN, RegisteredAt: h.RegisteredAt, LastSeq: h.LastSeq,
			byID: map[string]*Checkpoint{}, stub: &stub{oldestLive: h.OldestLive, owner: s, kept: h.Kept}}
		s.Agents[a.ID] = a
		s.Order = append(s.Order, a.ID)
		s.last = max(s.last, h.LastSeq)
	}
	for _, c := range in.Captures {
		s.captures.add(captureRecord{seq: c.Seq, typ: c.Type, agent: c.Agent, checkpoint: c.Checkpoint,
			reason: c.Reason, turn: c.Turn})
		s.last = max(s.last, c.Seq)
	}
	for _, e := range in.Ignored {
		if s.ignoredEdits == nil {
			s.ignoredEdits = map[string][]ignoredEdit{}
		}
		s.ignoredEdits[e.Agent] = append(s.ignoredEdits[e.Agent], ignoredEdit{e.Seq, e.Paths})
	}
	return s, nil
}

// UnmarshalOwn is the state an agent's own part holds: that agent alone,
// whole, to fold its later records into (Apply) for a Loader; complete is
// the seq from which it holds all the history of its tree.
func UnmarshalOwn(id string, p Part) (st *State, complete int64, err error) {
	var in snapOne
	if err := json.Unmarshal(p.Body, &in); err != nil {
		return nil, 0, err
	}
	sa := &in.Agent
	if sa.ID != id {
		return nil, 0, fmt.Errorf("the part of agent %s holds agent %q", id, sa.ID)
	}
	a := &Agent{ID: sa.ID, Tree: sa.Tree, Worktree: sa.Worktree, Isolation: sa.Isolation, Harness: sa.Harness, Parent: sa.Parent,
		State: sa.State, Binding: sa.Binding, NotePending: sa.NotePending, OpenRollback: sa.OpenRollback,
		LastRollback: sa.LastRollback, LastTurnN: sa.LastTurnN, LastCkptN: sa.LastCkptN,
		RegisteredAt: sa.RegisteredAt, LastSeq: sa.LastSeq, forgot: sa.Forgot,
		byID: map[string]*Checkpoint{}, turnByID: map[string]*Turn{}}
	for _, t := range sa.Turns {
		if t == nil || a.turnByID[t.ID] != nil {
			return nil, 0, fmt.Errorf("agent %s: a turn is missing or twice", a.ID)
		}
		a.Turns = append(a.Turns, t)
		a.turnByID[t.ID] = t
	}
	if sa.OpenTurn != "" {
		if a.OpenTurn = a.turnByID[sa.OpenTurn]; a.OpenTurn == nil {
			return nil, 0, fmt.Errorf("agent %s: open turn %s is not there", a.ID, sa.OpenTurn)
		}
	}
	for j := range sa.Checkpoints {
		sc := &sa.Checkpoints[j]
		if a.byID[sc.Checkpoint] != nil {
			return nil, 0, fmt.Errorf("agent %s: checkpoint %s twice", a.ID, sc.Checkpoint)
		}
		c := &Checkpoint{Taken: sc.Taken, Seq: sc.Seq, Ts: sc.Ts, N: sc.N, Label: sc.Label,
			Labels: sc.Labels, ReusedIn: sc.ReusedIn, Pruned: sc.Pruned, Removed: sc.Removed}
		a.Checkpoints = append(a.Checkpoints, c)
		a.byID[c.Checkpoint] = c
	}
	if !validPairs(p.Ends) {
		return nil, 0, fmt.Errorf("agent %s: the turn ends are damaged", a.ID)
	}
	a.forgot.ends = p.Ends
	st = New()
	st.Agents[a.ID] = a
	st.Order = []string{a.ID}
	st.last = a.LastSeq
	return st, in.Complete, nil
}

// validPairs reports whether b is whole uvarint pairs.
func validPairs(b []byte) bool {
	for len(b) > 0 {
		for range 2 {
			_, k := binary.Uvarint(b)
			if k <= 0 {
				return false
			}
			b = b[k:]
		}
	}
	return true
}

// RaiseComplete notes that the fold holds all the history of tree only
// from seq on, when that is later than it said (a part loaded from an
// agent's own file left out more).
func (s *State) RaiseComplete(tree string, seq int64) {
	if s.complete == nil {
		s.complete = map[string]int64{}
	}
	if seq > s.complete[tree] {
		s.complete[tree] = seq
	}
}
