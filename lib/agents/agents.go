// Package agents folds the journal into agents, turns, checkpoints and
// states (docs/checkpoints.md#agents-turns-and-states). It reads only; writers append records and fold again.
package agents

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/suggest"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// States (docs/checkpoints.md#agents-turns-and-states).
const (
	Settled    = "settled"
	Running    = "running"
	HandedOver = "handed_over"
	Archived   = "archived"
)

// Isolations.
const (
	InPlace  = "in_place"
	Worktree = "worktree"
	Copy     = "copy"
)

// Turn is one turn of an agent.
type Turn struct {
	ID          string
	N           int
	Started     bool // a turn_start opened it
	Ended       bool
	HarnessTurn string
	Session     string // the harness session or thread it ran in, when hooks said
	HarnessEnd  string
	Version     string
	Dropped     bool
	Edits       []string // the paths the hooks saw it edit, maybe twice
	// Tools are its tool calls that changed the tree (tool.marked), in
	// order: Tools[i] is t<n>.<i+1>.
	Tools []ToolCall `json:",omitempty"`
	// Process is the harness process the turn runs in, when hooks said.
	Process journal.Process
	// EndCheckpoint is the checkpoint its turn_end took or reused: what
	// the shorthand t<n> names (docs/checkpoints.md#names).
	EndCheckpoint string
	// StartCheckpoint is the checkpoint its turn_start took or reused:
	// with EndCheckpoint, what the turn changed (explain).
	StartCheckpoint string
	StartSeq        int64
	EndSeq          int64
	// StartTs and EndTs are the times of its turn.started and turn.ended
	// records.
	StartTs, EndTs string
}

// ToolCallReason is the reason of a target just before a marked tool call
// (checkpoints.Find of t<n>.<i>), which no checkpoint holds.
const ToolCallReason = "tool_call"

// ToolCall is one tool call of a turn that changed the tree, and its
// capture (docs/checkpoints.md#tool-calls).
type ToolCall struct {
	Mark    string // t<n>.<i>
	Tool    string
	Command string
	Commit  string // the tree after the call, as a capture commit
	Head    *string
	Seq     int64
	At      string
}

// Checkpoint is a checkpoint.taken record and what later records said of it.
// It keeps the record's own members, not a whole journal.Entry: a long-lived
// agent has thousands of checkpoints, and an Entry is the union of every
// record type's members, four times the size.
type Checkpoint struct {
	journal.Taken
	Seq int64
	Ts  string
	N   int
	// Label is the newest label given; Labels every label given, oldest
	// first, each once: a reuse that sets a label adds it, and the
	// earlier ones still name the checkpoint (docs/checkpoints.md#labels).
	Label  *string
	Labels []string
	// ReusedIn are the turns whose captures reused the checkpoint
	// (checkpoint.reused with a turn), oldest first, each once: a turn's
	// start that found nothing changed since has this one as its own.
	ReusedIn []string
	Pruned   bool
	Removed  bool
	// reposJSON is Repos still as the log's text, from a scan with
	// LazyRepos, until DecodeRepos.
	reposJSON string
}

// addLabel gives the checkpoint label l (nil: none), the newest.
func (c *Checkpoint) addLabel(l *string) {
	if l == nil {
		return
	}
	c.Label = l
	if !slices.Contains(c.Labels, *l) {
		c.Labels = append(c.Labels, *l)
	}
}

// HasLabel reports whether the checkpoint was ever given label l.
func (c *Checkpoint) HasLabel(l string) bool { return slices.Contains(c.Labels, l) }

// Live reports whether the checkpoint still counts (not pruned or removed).
func (c *Checkpoint) Live() bool { return !c.Pruned && !c.Removed }

// Binding is the agent's harness conversation.
type Binding struct {
	Session    string
	ForkSource string
	ForkAt     string
	// Process is the harness process of the session's latest start.
	Process journal.Process
}

// Agent is one registered agent.
type Agent struct {
	ID   string
	Tree string
	// Worktree is Tree's identity at registration (lib/worktreeid); nil
	// for an agent registered before identities were recorded.
	Worktree  *worktreeid.ID
	Isolation string
	Harness   string
	Parent    string
	State     string
	Turns     []*Turn
	OpenTurn  *Turn
	// Checkpoints in the order they were taken; Latest is the newest live one.
	Checkpoints []*Checkpoint
	byID        map[string]*Checkpoint
	turnByID    map[string]*Turn
	Binding     Binding
	// NotePending is the rollback note waiting for the next prompt (docs/rollback.md#the-rollback-note).
	NotePending *journal.Entry
	// OpenRollback is a rollback.started with no rollback.ended.
	OpenRollback *journal.Entry
	// LastRollback is the last rollback that ended well, or that ended
	// with the tree neither S nor T (Ended says which): what --undo goes
	// back from, to its safety checkpoint (docs/rollback.md#undo).
	LastRollback *Rollback
	LastTurnN    int
	LastCkptN    int
	RegisteredAt int64
	// LastSeq is the seq of the last record of the agent's the fold read:
	// a part of a split snapshot that covers it is current (stub.go).
	LastSeq int64
	// forgot is what a fold snapshot left out of the agent (snapshot.go).
	forgot Forgotten
	// stub is set while the agent's turns and checkpoints are not loaded
	// (stub.go).
	stub *stub
	// unsorted: Turns holds a turn out of its number's order, until
	// Settle; sorts counts the sorts since the last Settle.
	unsorted bool
	sorts    int
}

// Rollback is a rollback --undo can take back: the checkpoint it went
// back to, and the safety checkpoint it took first; Copy is the fetched
// copy the checkpoint is of, "" for the agent's own.
type Rollback struct {
	Checkpoint, Safety, Copy string
	// Unseen: rollback.ended's unseen, the files it wrote that no
	// capture could see (journal.RollbackEnd).
	Unseen []string `json:",omitempty"`
	// Revert is what it took back, when it was a revert (t<n> or
	// k<a>..k<b>).
	Revert string `json:",omitempty"`
	// Ended is the code of a rollback that did not end well and may have
	// written part of its files: failed.rollback_interrupted (its process
	// died) or failed.rollback_partial (its way back failed). "" when it
	// ended well.
	Ended string `json:",omitempty"`
}

// ended folds a rollback.ended into a: the open rollback closes; one that
// ended well is the last rollback, with the note it leaves; one that may
// have left part of its files is the last rollback too, whose safety
// checkpoint --undo restores, as git rebase --abort restores the branch
// (docs/rollback.md#undo). One undone (failed.rollback_undone) left S:
// there is nothing of it to undo. Part of applyHead.
func (s *State) ended(a *Agent, e *journal.Entry) {
	a.OpenRollback = nil
	ok := e.OK != nil && *e.OK
	switch {
	case ok:
	case e.Code == string(errcode.FailedRollbackInterrupted), e.Code == string(errcode.FailedRollbackPartial):
		a.LastRollback = &Rollback{Checkpoint: e.Checkpoint, Safety: e.Safety, Copy: e.Copy, Revert: e.Revert,
			Ended: e.Code}
		return
	default:
		return
	}
	a.LastRollback = &Rollback{Checkpoint: e.Checkpoint, Safety: e.Safety, Copy: e.Copy, Unseen: e.Unseen,
		Revert: e.Revert}
	if e.Restore == "files" {
		cp := *e
		a.NotePending = &cp
	}
	s.noteSharers(a, e)
}

// ignoredEdit is an edit.recorded's ignored paths, at its seq.
type ignoredEdit struct {
	seq   int64
	paths []string
}

// IgnoredEditsAfter lists, sorted and once each, the ignored paths the
// agent's own edit records named after seq (docs/rollback.md#outside-edits).
func (s *State) IgnoredEditsAfter(agent string, seq int64) []string {
	return s.IgnoredEditsBetween(agent, seq, math.MaxInt64)
}

// IgnoredEditsBetween is IgnoredEditsAfter for the edit records logged
// after seq and up to through: a revert's turn's.
func (s *State) IgnoredEditsBetween(agent string, seq, through int64) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, e := range s.ignoredEdits[agent] {
		if e.seq <= seq || e.seq > through {
			continue
		}
		for _, p := range e.paths {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Checkpoint returns the checkpoint of that id, live or not.
func (a *Agent) Checkpoint(id string) *Checkpoint {
	a.need()
	return a.byID[id]
}

// Labeled returns the checkpoints the agent gave label l, live or not,
// newest first (docs/checkpoints.md#labels).
func (a *Agent) Labeled(l string) []*Checkpoint {
	a.need()
	var out []*Checkpoint
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		if c := a.Checkpoints[i]; c.HasLabel(l) {
			out = append(out, c)
		}
	}
	return out
}

// Latest returns the newest live checkpoint, or nil.
func (a *Agent) Latest() *Checkpoint {
	a.need()
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		if a.Checkpoints[i].Live() {
			return a.Checkpoints[i]
		}
	}
	return nil
}

// Turn returns the turn of that id, or nil.
func (a *Agent) Turn(id string) *Turn {
	a.need()
	if a.turnByID != nil {
		return a.turnByID[id]
	}
	for _, t := range a.Turns {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// LastEndedTurn is the last turn that has ended and was not dropped, or nil.
func (a *Agent) LastEndedTurn() *Turn {
	a.need()
	for i := len(a.Turns) - 1; i >= 0; i-- {
		if t := a.Turns[i]; t.Ended && !t.Dropped {
			return t
		}
	}
	return nil
}

// HasConversation reports whether a harness holds the agent's
// conversation: an agent registered with harness none has none, so a
// rollback has nothing to rewind and nothing to say about one.
func (a *Agent) HasConversation() bool { return a.Harness != "none" && a.Harness != "" }

// PersonsOwn reports an agent that never had a turn and has no harness:
// only manual checkpoints, so its edits are a person's own and nothing of
// its history is outside its turns (docs/rollback.md#your-own-checkpoints).
func (a *Agent) PersonsOwn() bool {
	return a.LastTurnN == 0 && a.OpenTurn == nil && !a.HasConversation()
}

// Live reports running or handed over (docs/checkpoints.md#agents-turns-and-states).
func (a *Agent) Live() bool { return a.State == Running || a.State == HandedOver }

// State is the fold of a whole journal.
type State struct {
	Agents map[string]*Agent
	Order  []string // agent ids in registration order
	// Here is the worktree the command runs in (canonical, as an agent's
	// Tree): an agent left unnamed is the one agent of this worktree.
	Here string
	// HereWorktree is that worktree's identity (worktreeid.Of), which
	// tells a linked worktree moved since an agent registered in it.
	HereWorktree *worktreeid.ID
	// captures are the capture records (checkpoint.taken, .reused and
	// .failed) in log order, for the window walk: the fold keeps these
	// rather than every record, so that it holds the state, not the log.
	captures captureLog
	// ignoredEdits are the edit records that named ignored paths, by agent.
	ignoredEdits map[string][]ignoredEdit
	// complete is, by tree, the seq from which the fold holds all history,
	// when it was loaded from a snapshot (Partial).
	complete map[string]int64
	// last is the highest seq the fold read.
	last int64
	// loader folds a stub agent's turns and checkpoints (stub.go).
	loader Loader
	// KeepRecent, when above 0, is recentCaptures: a test's knob of the
	// command (VENOM_TEST_FOLD_RECENT in its environment).
	KeepRecent int
}

// captureLog is the capture records in log order, in blocks of a fixed
// size: a slice grown by append copies itself again and again, on a long
// log five times its size in memory a short-lived process must fault in.
type captureLog struct{ blocks [][]captureRecord }

const captureBlock = 512

func (l *captureLog) add(r captureRecord) {
	if n := len(l.blocks); n == 0 || len(l.blocks[n-1]) == captureBlock {
		l.blocks = append(l.blocks, make([]captureRecord, 0, captureBlock))
	}
	last := &l.blocks[len(l.blocks)-1]
	*last = append(*last, r)
}

// each calls fn with every record, in log order.
func (l *captureLog) each(fn func(*captureRecord)) {
	for _, b := range l.blocks {
		for i := range b {
			fn(&b[i])
		}
	}
}

// captureRecord is what the window walk reads of a capture record.
type captureRecord struct {
	seq        int64
	typ        string
	agent      string
	checkpoint string
	reason     string
	turn       string
}

// DecodeRepos ends a fold made with journal.ScanOptions.LazyRepos: the
// checkpoints still live get their Repos; pruned and removed ones, which
// nothing reads them of, keep none. A record whose repos do not decode
// leaves its checkpoint without, which makes it unusable, as a damaged
// record is.
func (s *State) DecodeRepos() {
	for _, a := range s.Agents {
		for _, c := range a.Checkpoints {
			if c.reposJSON == "" {
				continue
			}
			if c.Live() && c.Repos == nil {
				c.Repos, _ = journal.DecodeRepos(c.reposJSON)
			}
			c.reposJSON = ""
		}
		// One pruned or removed since a snapshot was made keeps none either.
		for _, c := range a.Checkpoints {
			if !c.Live() {
				c.Repos = nil
			}
		}
	}
}

// Agent returns the agent of that id, or nil.
func (s *State) Agent(id string) *Agent { return s.Agents[id] }

// Active lists the agents that are not archived, in registration order.
func (s *State) Active() []*Agent {
	var out []*Agent
	for _, id := range s.Order {
		if a := s.Agents[id]; a.State != Archived {
			out = append(out, a)
		}
	}
	return out
}

// Sharers lists the other non-archived agents using a's tree (docs/rollback.md#guarded-trees).
func (s *State) Sharers(a *Agent) []*Agent { return sharers(a, s.Active()) }

// Guarded reports whether a's tree is guarded: in place, or shared (docs/rollback.md#guarded-trees).
func (s *State) Guarded(a *Agent) bool { return guarded(a, s.Sharers(a)) }

// Sharing is the agents not archived by tree, in registration order: the
// sharers of every agent at the cost of one pass (a listing of two
// thousand agents on one tree would make four million comparisons).
type Sharing map[string][]*Agent

// Sharing indexes the agents not archived by tree.
func (s *State) Sharing() Sharing {
	sh := Sharing{}
	for _, a := range s.Active() {
		sh[a.Tree] = append(sh[a.Tree], a)
	}
	return sh
}

// Sharers is State.Sharers.
func (sh Sharing) Sharers(a *Agent) []*Agent { return sharers(a, sh[a.Tree]) }

// Guarded is State.Guarded.
func (sh Sharing) Guarded(a *Agent) bool { return guarded(a, sh.Sharers(a)) }

// sharers are the agents of active, not archived, on a's tree but a.
func sharers(a *Agent, active []*Agent) []*Agent {
	var out []*Agent
	for _, o := range active {
		if o.ID != a.ID && o.Tree == a.Tree {
			out = append(out, o)
		}
	}
	return out
}

// guarded is whether a's tree is guarded, shared with sharers.
func guarded(a *Agent, sharers []*Agent) bool { return a.Isolation == InPlace || len(sharers) > 0 }

// Descendants lists a's children, their children, and so on.
func (s *State) Descendants(a *Agent) []*Agent {
	var out []*Agent
	seen := map[string]bool{a.ID: true}
	queue := []string{a.ID}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, id := range s.Order {
			c := s.Agents[id]
			if c.Parent == p && !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c)
				queue = append(queue, c.ID)
			}
		}
	}
	return out
}

// New is the state of an empty journal; Apply folds records into it.
func New() *State { return &State{Agents: map[string]*Agent{}} }

// Fold builds the state from the journal's entries.
func Fold(entries []journal.Entry) *State {
	s := New()
	for i := range entries {
		s.Apply(&entries[i])
	}
	s.Settle()
	return s
}

// Settle ends a fold (a run of Apply): each agent's Turns, which a record
// out of order left unsorted, is sorted by number, once. Whoever folds
// calls it before reading the state; Apply alone leaves that order to it.
func (s *State) Settle() {
	sorts := 0
	for _, a := range s.Agents {
		if a.unsorted {
			a.sortTurns()
		}
		sorts += a.sorts
		a.sorts = 0
	}
	if sorts > 0 {
		// How many times a fold sorted turns: at most once an agent.
		testhook.Counted("fold-turn-sorts", sorts)
	}
}

// sortTurns puts Turns in number order.
func (a *Agent) sortTurns() {
	sort.SliceStable(a.Turns, func(i, j int) bool { return a.Turns[i].N < a.Turns[j].N })
	a.unsorted = false
	a.sorts++
}

// Apply folds one more record into the state. It keeps copies of what it
// needs, never e itself, so a reader may reuse e for the next record.
func (s *State) Apply(e *journal.Entry) {
	s.last = max(s.last, e.Seq)
	switch e.Type {
	case journal.CheckpointTaken, journal.CheckpointReused, journal.CheckpointFailed:
		s.captures.add(captureRecord{seq: e.Seq, typ: e.Type, agent: e.Agent,
			checkpoint: e.Checkpoint, reason: e.Reason, turn: deref(e.Turn)})
	case journal.EditRecorded:
		if len(e.Ignored) > 0 {
			if s.ignoredEdits == nil {
				s.ignoredEdits = map[string][]ignoredEdit{}
			}
			s.ignoredEdits[e.Agent] = append(s.ignoredEdits[e.Agent], ignoredEdit{e.Seq, e.Ignored})
		}
	}
	if e.Type == journal.AgentRegistered {
		if a, ok := s.Agents[e.Agent]; ok {
			a.LastSeq = e.Seq
			if a.State == Archived {
				a.reopen(e)
			}
			return
		}
		a := &Agent{ID: e.Agent, Tree: e.Tree, Worktree: e.Worktree, Isolation: e.Isolation, Harness: e.Harness,
			State: Settled, byID: map[string]*Checkpoint{}, RegisteredAt: e.Seq, LastSeq: e.Seq}
		if e.Parent != nil {
			a.Parent = *e.Parent
		}
		s.Agents[e.Agent] = a
		s.Order = append(s.Order, e.Agent)
		return
	}
	a := s.Agents[e.Agent]
	if a == nil {
		return
	}
	a.LastSeq = e.Seq
	if a.stub != nil {
		s.applyStub(a, e)
		return
	}
	switch e.Type {
	case journal.TurnStarted:
		t := a.turn(deref(e.Turn))
		t.Started, t.StartSeq, t.StartTs = true, e.Seq, e.Ts
		if e.HarnessTurn != "" {
			t.HarnessTurn = e.HarnessTurn
		}
		if e.HarnessSession != nil && *e.HarnessSession != "" {
			t.Session = *e.HarnessSession
		}
		t.Process = e.Process
		a.OpenTurn = t
		if a.State != Archived {
			a.State = Running
		}
	case journal.TurnEnded:
		t := a.turn(deref(e.Turn))
		t.Ended, t.EndSeq, t.EndTs = true, e.Seq, e.Ts
		if e.HarnessTurn != "" {
			t.HarnessTurn = e.HarnessTurn
		}
		if e.HarnessSession != nil && *e.HarnessSession != "" {
			t.Session = *e.HarnessSession
		}
		if e.HarnessEnd != "" {
			t.HarnessEnd = e.HarnessEnd
		}
		if e.HarnessVersion != "" {
			t.Version = e.HarnessVersion
		}
		if a.OpenTurn == t {
			a.OpenTurn = nil
		}
		if a.State == Running {
			a.State = Settled
		}
	case journal.EditRecorded:
		t := a.Turn(deref(e.Turn))
		if t == nil {
			return
		}
		// A list, not a set: a turn of one edit would cost a map, and a
		// path edited twice is only looked at twice.
		t.Edits = append(t.Edits, e.Paths...)
	case journal.ToolMarked:
		t := a.Turn(deref(e.Turn))
		repos := e.Repos
		if repos == nil && e.ReposJSON != "" {
			repos, _ = journal.DecodeRepos(e.ReposJSON) // few, and every one is read
		}
		if t == nil || len(repos) == 0 {
			return
		}
		t.Tools = append(t.Tools, ToolCall{Mark: e.Mark, Tool: e.Tool, Command: e.Command,
			Commit: repos[0].Commit, Head: repos[0].Head, Seq: e.Seq, At: e.At})

	case journal.CheckpointTaken:
		n, _ := ids.ParseCheckpoint(e.Checkpoint)
		c := &Checkpoint{Taken: journal.Taken{Agent: e.Agent, Checkpoint: e.Checkpoint, Reason: e.Reason,
			Turn: e.Turn, ThroughTurn: e.ThroughTurn, At: e.At, MidTurn: e.MidTurn, Overlap: e.Overlap,
			Label: e.Label, Source: e.Source, Repos: e.Repos}, Seq: e.Seq, Ts: e.Ts, N: n,
			reposJSON: e.ReposJSON}
		c.addLabel(e.Label)
		a.Checkpoints = append(a.Checkpoints, c)
		a.byID[e.Checkpoint] = c
		if n > a.LastCkptN {
			a.LastCkptN = n
		}
		a.turnCapture(e)
		a.handOver(e.Reason)
	case journal.CheckpointReused:
		if c := a.byID[e.Checkpoint]; c != nil {
			c.addLabel(e.Label)
			if t := deref(e.Turn); t != "" && !slices.Contains(c.ReusedIn, t) && (c.Turn == nil || *c.Turn != t) {
				c.ReusedIn = append(c.ReusedIn, t)
			}
		}
		a.turnCapture(e)
		a.handOver(e.Reason)
	case journal.CheckpointFailed:
		// The hand-over happened even when its capture failed.
		a.handOver(e.Reason)
	case journal.CheckpointPruned:
		for _, id := range e.Checkpoints {
			if c := a.byID[id]; c != nil {
				c.Pruned = true
			}
		}
	case journal.CheckpointRemoved:
		for _, id := range e.Checkpoints {
			if c := a.byID[id]; c != nil {
				c.Removed = true
			}
		}
	case journal.RollbackEnded:
		// The turns it dropped; the rest is applyHead's.
		for _, id := range e.Drops {
			if t := a.Turn(id); t != nil {
				t.Dropped = true
			}
		}
	}
	s.applyHead(a, e)
}

// applyHead folds the records whose effect is the same on a stub and on
// an agent whole (stub.go), on the members both have: the binding, the
// rollbacks, the note and archiving. It reports whether e was one.
func (s *State) applyHead(a *Agent, e *journal.Entry) bool {
	switch e.Type {
	case journal.AgentArchived:
		a.State = Archived
	case journal.AgentBinding:
		if e.HarnessSession != nil {
			a.Binding.Session = *e.HarnessSession
		}
		a.Binding.ForkSource, a.Binding.ForkAt = e.ForkSource, e.ForkAt
		a.Binding.Process = e.Process
	case journal.RollbackStarted:
		cp := *e
		a.OpenRollback = &cp
	case journal.RollbackEnded:
		s.ended(a, e)
	case journal.NoteDelivered:
		a.NotePending = nil
	default:
		return false
	}
	return true
}

// turnCapture notes a turn_start or turn_end capture's checkpoint on its
// turn, whose turn.started or turn.ended record comes first.
func (a *Agent) turnCapture(e *journal.Entry) {
	if e.Turn == nil || (e.Reason != "turn_end" && e.Reason != "turn_start") {
		return
	}
	t := a.Turn(*e.Turn)
	switch {
	case t == nil:
	case e.Reason == "turn_end":
		t.EndCheckpoint = e.Checkpoint
	default:
		t.StartCheckpoint = e.Checkpoint
	}
}

// handOver follows a takeover or takeback capture: handed_over between
// them (docs/checkpoints.md#agents-turns-and-states).
func (a *Agent) handOver(reason string) {
	switch reason {
	case "takeover":
		if a.State != Archived {
			a.State = HandedOver
		}
	case "takeback":
		if a.State == HandedOver {
			a.State = Settled
		}
	}
}

// turn returns the turn of that id, creating it (numbers never reused).
func (a *Agent) turn(id string) *Turn {
	if t := a.Turn(id); t != nil {
		return t
	}
	n, _ := ids.ParseTurn(id)
	t := &Turn{ID: id, N: n}
	if a.turnByID == nil {
		a.turnByID = map[string]*Turn{}
		for _, o := range a.Turns {
			a.turnByID[o.ID] = o
		}
	}
	a.turnByID[id] = t
	a.Turns = append(a.Turns, t)
	// Turns almost always arrive in order. One that does not is put in its
	// place by Settle, once the fold is read: sorting at each record made
	// a log of turns in descending order (a fetched copy's, say)
	// quadratic, 17 s for 60,000 turns.
	if k := len(a.Turns); k > 1 && a.Turns[k-2].N > n {
		a.unsorted = true
	}
	if n > a.LastTurnN {
		a.LastTurnN = n
	}
	return t
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// HarnessHint is the hint that a harness's hooks register an agent, for
// a repository with none yet. A command that has the harnesses writes it
// with their names (harness.Hints).
const HarnessHint = "or let a harness do it: git venom-checkpoint hook install <harness>"

// Resolve picks the agent a command means: the id given (by --agent or
// VENOM_AGENT), else the one agent of the worktree the command runs in
// that is not archived (docs/checkpoints.md#names). An agent of another
// worktree is never picked: a capture or a rollback would read or write
// that worktree's files, not the one the person is in.
func (s *State) Resolve(given string) (string, error) {
	if given != "" {
		if !ids.ValidAgent(given) {
			return "", errcode.Newf(errcode.InvalidParamsAgent, map[string]string{"agent": given},
				"%q is not a valid agent id: use [a-z0-9][a-z0-9_-]{0,63}", given)
		}
		return given, nil
	}
	active := s.Active()
	if len(active) == 1 && (s.Here == "" || s.OfHere(active[0])) {
		return active[0].ID, nil
	}
	if len(active) == 0 && len(s.Order) > 0 {
		return "", s.allCleaned()
	}
	if len(active) == 0 {
		// docs/checkpoints.md#names lets --agent be left out only for an agent that
		// exists: an id is part of every ref and record for good, so
		// none is made up for the person.
		return "", errcode.Newf(errcode.InvalidParamsAgent, map[string]any{"agents": []string{}},
			"no agent is registered in this repository yet: name the first one with --agent").
			Shorter("no agent registered yet: name one with --agent").
			Hint("git venom-checkpoint --agent=a1   registers a1 with its first checkpoint").
			Hint("(any id of [a-z0-9][a-z0-9_-]{0,63} will do)").
			Hint("%s", HarnessHint)
	}
	var here []*Agent
	for _, a := range active {
		if s.Here != "" && s.OfHere(a) {
			here = append(here, a)
		}
	}
	if len(here) == 1 {
		return here[0].ID, nil
	}
	if len(here) == 0 && s.Here != "" {
		return "", s.noneHere(active)
	}
	candidates, where := here, "this worktree has"
	if len(here) == 0 {
		candidates, where = active, "this repository has"
	}
	names := make([]string, len(candidates))
	for i, a := range candidates {
		names[i] = a.ID
	}
	e := errcode.Newf(errcode.InvalidParamsAgent, map[string]any{"agents": names},
		"%s %d agents (%s): name one with --agent", where, len(names), strings.Join(names, ", "))
	// Within 80 columns, as "error: invalid_params.agent: " and "hint: "
	// print it: the names move to hint lines where they do not fit.
	const room = 80 - len("error: invalid_params.agent: ")
	if hint := "for example --agent=" + names[0] + "; git venom-checkpoint agents lists them"; len(e.Message) <= room && len(hint) <= 80-len("hint: ") {
		return "", e.Hint("%s", hint)
	}
	e.Shorter("%s %d agents: name one with --agent", where, len(names))
	// At most three lines of names: `agents` lists them all.
	line, lines := "they are", 0
	for i, n := range names {
		if i < len(names)-1 {
			n += ","
		}
		if len(line)+1+len(n) > 80-len("hint: ") {
			if lines == 2 {
				return "", e.Hint("%s", line).Hint("  … and %d more: git venom-checkpoint agents lists them", len(names)-i).
					Hint("for example --agent=%s", names[0])
			}
			e.Hint("%s", line)
			line, lines = " ", lines+1
		}
		line += " " + n
	}
	return "", e.Hint("%s", line).Hint("for example --agent=%s", names[0])
}

// OfHere reports whether a's tree is the worktree the command runs in:
// its path, or the linked worktree it registered in, moved since (git
// worktree move keeps the admin folder, so its identity).
func (s *State) OfHere(a *Agent) bool {
	if a.Tree == s.Here {
		return true
	}
	w, h := a.Worktree, s.HereWorktree
	return w != nil && h != nil && w.Made != "" && *w == *h
}

// allCleaned is the error for an unnamed agent where every agent was
// cleaned (archived): clean keeps young safety checkpoints, which
// --agent still reaches, so the hints list them rather than register
// the id again, which would adopt the old safety checkpoint as its first.
func (s *State) allCleaned() error {
	var archived []string
	for _, id := range s.Order {
		if a := s.Agents[id]; a.State == Archived && (s.Here == "" || s.OfHere(a)) {
			archived = append(archived, id)
		}
	}
	if len(archived) == 0 {
		archived = s.Order
	}
	msg := "every agent was cleaned (archived)"
	if len(archived) == 1 {
		msg = archived[0] + " was cleaned (archived)"
	}
	e := errcode.Newf(errcode.InvalidParamsAgent, map[string]any{"agents": []string{}},
		"%s; none is registered in this repository now: name one with --agent", msg).
		Shorter("%s: name one with --agent", msg)
	for i := len(archived) - 1; i >= 0 && i >= len(archived)-3; i-- {
		e.Hint("git venom-checkpoint list --agent=%s   lists the checkpoints clean kept", archived[i])
	}
	fresh := "a1"
	for n := 2; s.Agents[fresh] != nil; n++ {
		fresh = "a" + strconv.Itoa(n)
	}
	return e.Hint("git venom-checkpoint --agent=%s   registers a new agent %s", fresh, fresh)
}

// noneHere is the error for an unnamed agent where only other worktrees
// have agents: those are never picked, and the hints say where they work
// and how this worktree gets its own.
func (s *State) noneHere(active []*Agent) error {
	names := make([]string, len(active))
	for i, a := range active {
		names[i] = a.ID
	}
	e := errcode.Newf(errcode.InvalidParamsAgent, map[string]any{"agents": []string{}, "elsewhere": names},
		"no agent works in this worktree: name one with --agent")
	for i, a := range active {
		if i == 3 {
			e.Hint("… and %d more: git venom-checkpoint agents lists them", len(active)-i)
			break
		}
		// The path on its own line, as long paths go (80 columns).
		e.Hint("agent %s works in another worktree:", a.ID).Hint("  %s", a.Tree)
	}
	return e.Hint("git venom-checkpoint list --agent=%s reads its checkpoints from here;", active[0].ID).
		Hint("git venom-checkpoint --agent=<new id> registers this worktree's own agent")
}

// Known returns the agent or not_found.agent (docs/checkpoints.md#agents-turns-and-states).
func (s *State) Known(id string) (*Agent, error) {
	if a := s.Agents[id]; a != nil {
		return a, nil
	}
	e := errcode.Newf(errcode.NotFoundAgent, map[string]string{"agent": id}, "no agent %s in this repository", id)
	var known []string
	for _, a := range s.Active() {
		known = append(known, a.ID)
	}
	switch close := suggest.Close(id, known); {
	case len(close) == 1:
		e.Hint("did you mean --agent=%s?", close[0])
	case len(close) > 1:
		e.Hint("did you mean one of %s?", strings.Join(close, ", "))
	case len(known) > 0:
		e.Hint("git venom-checkpoint agents lists them")
	}
	return nil, e
}

// Named is the registered agent a command means: Resolve, then Known.
func (s *State) Named(given string) (*Agent, error) {
	id, err := s.Resolve(given)
	if err != nil {
		return nil, err
	}
	return s.Known(id)
}

// reopen registers a cleaned (archived) agent's id again: the id is free
// for a new agent, as a branch name is after git branch -d. Its history
// stays (checkpoint and turn numbers go on from where they were, so no ref
// name is taken twice, and what clean kept stays listed); the tree,
// isolation, harness and parent are the new registration's, and the old
// conversation binding and any turn left open are dropped.
func (a *Agent) reopen(e *journal.Entry) {
	a.Tree, a.Worktree, a.Isolation, a.Harness, a.Parent = e.Tree, e.Worktree, e.Isolation, e.Harness, ""
	if e.Parent != nil {
		a.Parent = *e.Parent
	}
	a.State, a.OpenTurn, a.Binding, a.RegisteredAt = Settled, nil, Binding{}, e.Seq
}
