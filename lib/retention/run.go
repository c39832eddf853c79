package retention

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture/private"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Pruned is one agent's line of a prune: {agent, repo, pruned, failed}.
type Pruned struct {
	Agent  string   `json:"agent"`
	Repo   string   `json:"repo"`
	Pruned []string `json:"pruned"`
	Failed []Failed `json:"failed"`
}

// Failed is a ref that could not be deleted; the next prune retries it.
type Failed struct {
	Checkpoint string `json:"checkpoint"`
	Reason     string `json:"reason"`
}

// Prune deletes the checkpoints retention expires, of one agent or of all
// ("" ), inside the caller's transaction, and logs checkpoint.pruned
// {agent, checkpoints} for each agent that lost some. A ref that cannot be
// deleted is reported and stays counted, so the next prune retries it.
func Prune(ctx context.Context, tx *state.Txn, agent string) ([]Pruned, error) {
	if err := state.Intact(tx.Log, "no ref is deleted"); err != nil {
		return nil, err
	}
	order, byAgent, err := toPrune(tx, agent, false)
	if err != nil {
		return nil, err
	}
	outcomes := Delete(ctx, tx.Store.Repo, byAgent)
	if why, ok := stopped(outcomes); ok {
		return nil, interrupt.Coded(why, "no checkpoint was pruned")
	}
	// A kill here leaves logged checkpoints without their refs: doctor
	// fails on them until a prune records them.
	if err := testhook.PointIn(ctx, "prune-refs-deleted"); err != nil {
		return nil, err
	}
	// Removed worktrees leave their private indexes behind; a prune is
	// when the state directory is swept.
	private.ForgetGone(tx.Store.Repo.StateDir)
	res := []Pruned{}
	for _, id := range order {
		o := outcomes[id]
		if o == nil {
			continue
		}
		line := Pruned{Agent: id, Repo: ".", Pruned: o.Gone(), Failed: failures(o)}
		if len(line.Pruned) > 0 {
			if _, err := tx.Append(journal.CheckpointPruned, journal.PrunedRecord{Agent: id, Checkpoints: line.Pruned}); err != nil {
				return nil, err
			}
			// A turn whose end went takes its marked tool calls along:
			// nothing reads them without it (blame, explain, list --tools).
			// One that cannot be deleted stays, harmless.
			a := tx.State.Agents[id]
			dels := endedToolRefs(a, line.Pruned)
			dels = append(dels, OrphanToolRefs(ctx, tx.Store.Repo, a, endedTurns(a, line.Pruned))...)
			_ = refs.DeleteAll(ctx, tx.Store.Repo, dels)
		} else {
			line.Pruned = []string{}
		}
		res = append(res, line)
	}
	return res, nil
}

// PruneDryRun is what Prune would delete, deleting and logging nothing:
// the same lines, every ref counted as deleted.
func PruneDryRun(tx *state.Txn, agent string) ([]Pruned, error) {
	order, byAgent, err := toPrune(tx, agent, true)
	if err != nil {
		return nil, err
	}
	res := []Pruned{}
	for _, id := range order {
		if list := byAgent[id]; len(list) > 0 {
			res = append(res, Pruned{Agent: id, Repo: ".", Pruned: idsOf(list), Failed: []Failed{}})
		}
	}
	return res, nil
}

// toPrune is what retention expires, by agent (one agent, or all: ""),
// with the agents in registration order. An agent the fold holds as a
// stub (agents.Stub) is loaded only when what its live checkpoints come
// to (agents.Kept) does not settle it: with dry, what goes of it is then
// listed from that alone (checkpoints with a number and id only); else
// it is loaded when anything goes.
func toPrune(tx *state.Txn, agent string, dry bool) ([]string, map[string][]*agents.Checkpoint, error) {
	p := PolicyOf(tx.Store.Config, journal.Now())
	byAgent := map[string][]*agents.Checkpoint{}
	var order []string
	var present map[string]map[int]bool
	var load []string
	settled := map[string]bool{}
	for _, id := range tx.State.Order {
		if agent != "" && id != agent {
			continue
		}
		order = append(order, id)
		if !tx.State.Stub(id) {
			continue
		}
		if present == nil {
			present = checkpointRefs(tx.Store.Repo)
		}
		if ns, ok := expiredKept(tx.State.Agents[id], p, present[id]); ok && (dry || len(ns) == 0) {
			for _, n := range ns {
				byAgent[id] = append(byAgent[id], &agents.Checkpoint{Taken: journal.Taken{Agent: id,
					Checkpoint: ids.Checkpoint(n)}, N: n})
			}
			settled[id] = true
			continue
		}
		load = append(load, id)
	}
	if err := tx.Store.Load(tx.State, load); err != nil {
		return nil, nil, state.Failed("read", tx.Store.Repo.Log, err)
	}
	for _, id := range order {
		if settled[id] {
			continue
		}
		a := tx.State.Agents[id]
		exp := Expired(a, p)
		exp = append(exp, lost(tx.Store.Repo, a, exp)...)
		if len(exp) > 0 {
			byAgent[id] = exp
		}
	}
	return order, byAgent, nil
}

// expiredKept is the numbers of the checkpoints Expired lists of a stub
// agent, from what its live checkpoints come to (agents.Kept) and the
// numbers of the agent's refs: ok is false when that cannot say (an
// archived agent, a checkpoint old enough that an age may expire it, a
// live checkpoint with no ref, which lost looks into, or no Kept).
func expiredKept(a *agents.Agent, p Policy, refs map[int]bool) (ns []int, ok bool) {
	k, known := a.Kept()
	if !known || a.State == agents.Archived || refs == nil {
		return nil, false
	}
	if k.Oldest != "" {
		at, err := time.Parse(journal.TimeFormat, k.Oldest)
		if err != nil || p.Now.Sub(at) > min(p.KeepFor, p.KeepSafety) {
			return nil, false
		}
	}
	for _, l := range [][][2]int{k.Counted, k.Safety, k.Other} {
		for _, r := range l {
			for n := r[0]; n <= r[1]; n++ {
				if !refs[n] {
					return nil, false
				}
			}
		}
	}
	// By count only: the counted ones past the newest venom.keep, but
	// the newest of all.
	newest, seen := k.Newest(), 0
	for i := len(k.Counted) - 1; i >= 0; i-- {
		r := k.Counted[i]
		for n := r[1]; n >= r[0]; n-- {
			if seen++; seen > p.Keep && n != newest {
				ns = append(ns, n)
			}
		}
	}
	slices.Reverse(ns)
	return ns, true
}

// checkpointRefs is, by agent, the numbers of the refs under
// refs/venom/checkpoints/ (refs.Numbers); none when they cannot be
// listed. An agent with a live checkpoint whose ref is not listed is
// loaded, and lost looks at each of its refs again.
func checkpointRefs(r *repo.Repo) map[string]map[int]bool {
	got, err := refs.Numbers(r)
	if err != nil {
		return map[string]map[int]bool{}
	}
	return got
}

func idsOf(list []*agents.Checkpoint) []string {
	out := []string{}
	for _, c := range list {
		out = append(out, c.Checkpoint)
	}
	sort.Slice(out, func(i, j int) bool { return num(out[i]) < num(out[j]) })
	return out
}

// lost are the agent's live checkpoints, beside those already expiring,
// whose ref something deleted (docs/checkpoints.md#the-log: they count for nothing). Pruning
// records them as gone, so that list, doctor and dedup stop counting on
// them: nothing can bring such a ref back.
func lost(r *repo.Repo, a *agents.Agent, expiring []*agents.Checkpoint) []*agents.Checkpoint {
	skip := map[*agents.Checkpoint]bool{}
	for _, c := range expiring {
		skip[c] = true
	}
	var out []*agents.Checkpoint
	for _, c := range a.Checkpoints {
		if !c.Live() || len(c.Repos) == 0 || skip[c] {
			continue
		}
		if cur, err := refs.Resolve(r, a.ID, c.N); err == nil && cur == nil {
			out = append(out, c)
		}
	}
	return out
}

// stopped reports whether a signal stopped the deletions before they
// began (refs.DeleteAll's last safe point): then none was made.
func stopped(outcomes map[string]*Outcome) (string, bool) {
	for _, o := range outcomes {
		for _, err := range o.Failed {
			if why, ok := interrupt.From(err); ok {
				return why, true
			}
		}
	}
	return "", false
}

func failures(o *Outcome) []Failed {
	out := []Failed{}
	for id, err := range o.Failed {
		out = append(out, Failed{Checkpoint: id, Reason: err.Error()})
	}
	sort.Slice(out, func(i, j int) bool { return num(out[i].Checkpoint) < num(out[j].Checkpoint) })
	return out
}

// AfterTurnEnd prunes the agent after a turn_end capture (docs/checkpoints.md#retention-and-clean). Pruning
// is housekeeping: its failure never fails the capture, and the next prune
// retries.
func AfterTurnEnd(ctx context.Context, tx *state.Txn, agent string) {
	_, _ = Prune(ctx, tx, agent)
}

// Removed is one member of clean's checkpoints: {agent, repo, removed, kept}
// (docs/checkpoints.md#retention-and-clean), plus the refs that could not be deleted, when any.
type Removed struct {
	Agent   string   `json:"agent"`
	Repo    string   `json:"repo"`
	Removed int      `json:"removed"`
	Kept    int      `json:"kept"`
	Failed  []Failed `json:"failed"`
}

// Cleaned is clean's result.
type Cleaned struct {
	Agent       string    `json:"agent"`
	DryRun      bool      `json:"dry_run"`
	Checkpoints []Removed `json:"checkpoints"`
}

// Clean archives the agent, removes its checkpoints by isolation
// (docs/checkpoints.md#retention-and-clean), logs checkpoint.removed for
// each agent concerned, then prunes: worktree (tree gone or removed) its
// and its forks' all go; copy none; in_place all but pre_rollback ones
// younger than keep_safety. A failed deletion is reported, not an error.
func Clean(ctx context.Context, tx *state.Txn, a *agents.Agent) (*Cleaned, error) {
	if err := state.Intact(tx.Log, "no ref is deleted"); err != nil {
		return nil, err
	}
	// Archiving, deleting and logging go together: a signal stops the
	// clean before them, or they run to their end on a context it does
	// not end, and the result says what was done.
	if err := interrupt.Check(ctx); err != nil {
		return nil, interrupt.Coded(interrupt.Why(ctx), "the agent was not archived and no checkpoint was removed")
	}
	ctx, cancel := interrupt.Detach(ctx, cleanTimeout)
	defer cancel()
	if a.State != agents.Archived {
		if _, err := tx.Append(journal.AgentArchived, journal.Archived{Agent: a.ID}); err != nil {
			return nil, err
		}
	}
	concerned, remove := toClean(tx, a)
	outcomes := Delete(ctx, tx.Store.Repo, remove)
	// The agent's marked tool calls go with it: an archived agent's turns
	// are no target, and blame leaves out turns whose checkpoints went.
	// Only refs still holding their recorded capture are deleted.
	if a.Isolation != agents.Copy {
		dels := toolRefs(a)
		dels = append(dels, OrphanToolRefs(ctx, tx.Store.Repo, a, func(int) bool { return true })...)
		_ = refs.DeleteAll(ctx, tx.Store.Repo, dels)
	}
	res := &Cleaned{Agent: a.ID, Checkpoints: []Removed{}}
	for _, x := range concerned {
		live := len(liveOf(x))
		line := Removed{Agent: x.ID, Repo: ".", Failed: []Failed{}}
		gone := []string{}
		if o := outcomes[x.ID]; o != nil {
			gone = o.Gone()
			line.Removed = len(o.Deleted)
			line.Failed = failures(o)
		}
		line.Kept = live - len(gone)
		if _, err := tx.Append(journal.CheckpointRemoved, journal.RemovedRecord{Agent: x.ID, Repo: ".",
			Removed: line.Removed, Kept: line.Kept, Checkpoints: gone}); err != nil {
			return nil, err
		}
		res.Checkpoints = append(res.Checkpoints, line)
	}
	if _, err := Prune(ctx, tx, ""); err != nil {
		return nil, err
	}
	return res, nil
}

// cleanTimeout bounds a clean that a signal no longer ends.
const cleanTimeout = 5 * time.Minute

// CleanDryRun is what Clean would remove and keep, archiving, deleting and
// logging nothing. The prune that follows a clean is not in it: prune
// --dry-run shows that.
func CleanDryRun(tx *state.Txn, a *agents.Agent) *Cleaned {
	concerned, remove := toClean(tx, a)
	res := &Cleaned{Agent: a.ID, DryRun: true, Checkpoints: []Removed{}}
	for _, x := range concerned {
		n := len(remove[x.ID])
		res.Checkpoints = append(res.Checkpoints, Removed{Agent: x.ID, Repo: ".", Removed: n,
			Kept: len(liveOf(x)) - n, Failed: []Failed{}})
	}
	return res
}

// toClean is the agents a clean of a concerns (a, and the forks that
// borrowed its worktree once that is gone) and the checkpoints it removes
// from each.
func toClean(tx *state.Txn, a *agents.Agent) ([]*agents.Agent, map[string][]*agents.Checkpoint) {
	p := PolicyOf(tx.Store.Config, journal.Now())
	concerned := []*agents.Agent{a}
	remove := map[string][]*agents.Checkpoint{}
	if a.Isolation == agents.Worktree && treeGone(a.Tree) {
		// The forks that borrowed the worktree lose theirs too.
		for _, d := range tx.State.Descendants(a) {
			if d.Tree == a.Tree {
				concerned = append(concerned, d)
				remove[d.ID] = liveOf(d)
			}
		}
	}
	if list := cleanRemoves(a, p); len(list) > 0 {
		remove[a.ID] = list
	}
	return concerned, remove
}

func liveOf(a *agents.Agent) []*agents.Checkpoint {
	var out []*agents.Checkpoint
	for _, c := range a.Checkpoints {
		if c.Live() {
			out = append(out, c)
		}
	}
	return out
}

// endedToolRefs are the tool-call refs of the turns whose turn_end
// checkpoint is among gone.
func endedToolRefs(a *agents.Agent, gone []string) []refs.Deletion {
	var out []refs.Deletion
	for _, t := range a.Turns {
		if len(t.Tools) > 0 && slices.Contains(gone, t.EndCheckpoint) {
			out = append(out, toolRefsOf(a.ID, t)...)
		}
	}
	return out
}

// endedTurns says of a turn number whether its turn_end checkpoint is
// among gone.
func endedTurns(a *agents.Agent, gone []string) func(n int) bool {
	ended := map[int]bool{}
	for _, t := range a.Turns {
		if t.EndCheckpoint != "" && slices.Contains(gone, t.EndCheckpoint) {
			if n, err := ids.ParseTurn(t.ID); err == nil {
				ended[n] = true
			}
		}
	}
	return func(n int) bool { return ended[n] }
}

// OrphanToolRefs are the agent's tool-call refs no tool.marked record
// names, of the turns numbered as of says (docs/checkpoints.md#tool-calls):
// a mark makes its ref, then its record, both under the lock, so a ref
// found without its record while the caller holds the lock is a killed
// hook's. Each is deleted only while it still holds the commit it holds
// now. A ref whose name is not <n>/<i> is not git-venom's and is left.
func OrphanToolRefs(ctx context.Context, r *repo.Repo, a *agents.Agent, of func(n int) bool) []refs.Deletion {
	prefix := ids.ToolRefPrefix(a.ID)
	have, err := refs.Under(ctx, r, prefix)
	if err != nil || len(have) == 0 {
		return nil
	}
	named := map[string]bool{}
	for _, t := range a.Turns {
		for _, d := range toolRefsOf(a.ID, t) {
			named[d.Name] = true
		}
	}
	var out []refs.Deletion
	for name, oid := range have {
		turn, call, ok := strings.Cut(strings.TrimPrefix(name, prefix), "/")
		n, err1 := strconv.Atoi(turn)
		i, err2 := strconv.Atoi(call)
		if named[name] || !ok || err1 != nil || err2 != nil || ids.ToolRefName(a.ID, n, i) != name || !of(n) {
			continue
		}
		out = append(out, refs.Deletion{Name: name, Old: oid})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// toolRefs are the refs of the agent's marked tool calls
// (docs/checkpoints.md#tool-calls), each with the capture its record names.
func toolRefs(a *agents.Agent) []refs.Deletion {
	var out []refs.Deletion
	for _, t := range a.Turns {
		out = append(out, toolRefsOf(a.ID, t)...)
	}
	return out
}

func toolRefsOf(agent string, t *agents.Turn) []refs.Deletion {
	var out []refs.Deletion
	for _, tc := range t.Tools {
		if n, i, err := ids.ParseToolCall(tc.Mark); err == nil {
			out = append(out, refs.Deletion{Name: ids.ToolRefName(agent, n, i), Old: tc.Commit})
		}
	}
	return out
}

// Kept is a group of checkpoints clean keeps, and why, for a person.
type Kept struct {
	Checkpoints []string
	Why         string
}

// WhyKept says why clean keeps those of x's live checkpoints it does not
// remove (docs/checkpoints.md#retention-and-clean), one group a reason,
// oldest first. After a clean, what is live is what it kept.
func WhyKept(tx *state.Txn, x *agents.Agent) []Kept {
	if x == nil {
		return nil
	}
	p := PolicyOf(tx.Store.Config, journal.Now())
	removes := map[*agents.Checkpoint]bool{}
	switch {
	case x.Isolation == agents.Worktree && treeGone(x.Tree):
		return nil // all go, with the forks that borrowed the tree
	case x.Isolation == agents.InPlace:
		for _, c := range cleanRemoves(x, p) {
			removes[c] = true
		}
	}
	var out []Kept
	add := func(id, why string) {
		if n := len(out); n > 0 && out[n-1].Why == why {
			out[n-1].Checkpoints = append(out[n-1].Checkpoints, id)
			return
		}
		out = append(out, Kept{Checkpoints: []string{id}, Why: why})
	}
	for _, c := range liveOf(x) {
		switch {
		case removes[c]:
		case x.Isolation == agents.Copy:
			add(c.Checkpoint, "the agent's copy holds them; they go when its folder is deleted")
		case x.Isolation == agents.Worktree:
			add(c.Checkpoint, "the agent's worktree is still there; prune removes them once it is gone (git worktree remove)")
		case p.youngSafety(c):
			add(c.Checkpoint, fmt.Sprintf("younger than venom.keepSafety (%s), a safety checkpoint may hold the only copy of your edits; prune removes it later", durationText(p.KeepSafety)))
		}
	}
	return out
}

// durationText is d as git config takes venom.keep* durations: 14d, 3h,
// 30m, 45s.
func durationText(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		unit string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if d >= u.d && d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.unit)
		}
	}
	return fmt.Sprintf("%ds", int64(d/time.Second))
}
