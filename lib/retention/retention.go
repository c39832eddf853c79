// Package retention decides which checkpoints go (docs/checkpoints.md#retention-and-clean pruning, docs/checkpoints.md#retention-and-clean
// agent.clean) and deletes their refs: one update-ref transaction per
// repository, each ref only while it still holds the logged commit. It never
// runs git gc, prune or maintenance: the objects of a deleted ref go when the
// repository's own gc gets to them.
package retention

import (
	"context"
	"os"
	"sort"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
)

// Policy is the retention configuration at one moment.
type Policy struct {
	Keep       int
	KeepFor    time.Duration
	KeepSafety time.Duration
	Now        time.Time
}

// PolicyOf reads the venom.keep* keys.
func PolicyOf(c config.Config, now time.Time) Policy {
	return Policy{Keep: c.Keep, KeepFor: c.KeepFor, KeepSafety: c.KeepSafety, Now: now}
}

// Reasons with rules of their own.
const (
	manual      = "manual"
	preRollback = agents.PreRollback
)

func (p Policy) olderThan(c *agents.Checkpoint, d time.Duration) bool {
	at, err := time.Parse(journal.TimeFormat, c.At)
	if err != nil {
		return false // an unreadable time proves no age
	}
	return p.Now.Sub(at) > d
}

// youngSafety reports a pre_rollback checkpoint within venom.keepSafety:
// it may hold the only copy of a person's edits (docs/checkpoints.md#retention-and-clean).
func (p Policy) youngSafety(c *agents.Checkpoint) bool {
	return c.Reason == preRollback && !p.olderThan(c, p.KeepSafety)
}

// Expired lists the agent's live checkpoints that retention removes, oldest
// first (docs/checkpoints.md#retention-and-clean). The newest never goes while the agent is not archived;
// an archived agent's last checkpoints go too, so that all are gone within
// keep_safety at the latest (docs/checkpoints.md#retention-and-clean).
func Expired(a *agents.Agent, p Policy) []*agents.Checkpoint {
	var live []*agents.Checkpoint
	for _, c := range a.Checkpoints {
		if c.Live() {
			live = append(live, c)
		}
	}
	newest := -1
	if a.State != agents.Archived && len(live) > 0 {
		newest = len(live) - 1
	}
	var out []*agents.Checkpoint
	seen := 0 // counted checkpoints newer than the one looked at
	for i := len(live) - 1; i >= 0; i-- {
		c := live[i]
		var goes bool
		switch {
		case agents.CountedReason(c.Reason):
			seen++
			goes = seen > p.Keep || p.olderThan(c, p.KeepFor)
		case c.Reason == preRollback:
			goes = p.olderThan(c, p.KeepSafety)
		default: // manual, and any reason this version does not know
			goes = p.olderThan(c, p.KeepFor)
		}
		if goes && i != newest {
			out = append(out, c)
		}
	}
	if a.State == agents.Archived {
		// Pruning retries what clean could not delete (docs/checkpoints.md#retention-and-clean), and
		// finishes the job once a kept worktree is removed.
		have := map[*agents.Checkpoint]bool{}
		for _, c := range out {
			have[c] = true
		}
		for _, c := range cleanRemoves(a, p) {
			if !have[c] {
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out
}

// cleanRemoves lists the live checkpoints clean removes from the agent's
// own tree by its isolation (docs/checkpoints.md#retention-and-clean): a worktree's all once it is gone,
// a copy's none (they go with the folder), an in-place tree's all but
// the pre_rollback ones younger than keep_safety.
func cleanRemoves(a *agents.Agent, p Policy) []*agents.Checkpoint {
	var out []*agents.Checkpoint
	switch a.Isolation {
	case agents.Worktree:
		if treeGone(a.Tree) {
			out = liveOf(a)
		}
	case agents.InPlace:
		for _, c := range liveOf(a) {
			if !p.youngSafety(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// Outcome is what happened to one agent's refs.
type Outcome struct {
	Agent   string
	Deleted []*agents.Checkpoint // ref deleted, or already gone
	Moved   []*agents.Checkpoint // ref holds another commit: left alone
	Failed  map[string]error     // checkpoint id → why its ref could not go
}

// Gone lists the checkpoints whose ref no longer holds them: deleted, or
// moved by someone else. Both stop counting.
func (o *Outcome) Gone() []string {
	var out []string
	for _, c := range o.Deleted {
		out = append(out, c.Checkpoint)
	}
	for _, c := range o.Moved {
		out = append(out, c.Checkpoint)
	}
	sort.Slice(out, func(i, j int) bool { return num(out[i]) < num(out[j]) })
	return out
}

func num(id string) int {
	n, _ := ids.ParseCheckpoint(id)
	return n
}

// Delete removes the refs of the given checkpoints, per agent, in one
// transaction for the repository. A ref already gone counts as deleted; a
// ref that holds another commit is left alone (doctor reports it).
func Delete(ctx context.Context, r *repo.Repo, byAgent map[string][]*agents.Checkpoint) map[string]*Outcome {
	out := map[string]*Outcome{}
	var dels []refs.Deletion
	owner := map[string]*agents.Checkpoint{}
	agentOf := map[string]string{}
	for agent, list := range byAgent {
		o := &Outcome{Agent: agent, Failed: map[string]error{}}
		out[agent] = o
		for _, c := range list {
			for _, rs := range c.Repos {
				name := ids.RefName(agent, c.N)
				cur, err := refs.Resolve(r, agent, c.N)
				switch {
				case err != nil:
					o.Failed[c.Checkpoint] = err
				case cur == nil:
					o.Deleted = append(o.Deleted, c)
				case !sameOid(cur, rs.Commit):
					o.Moved = append(o.Moved, c)
				default:
					dels = append(dels, refs.Deletion{Name: name, Old: rs.Commit})
					owner[name], agentOf[name] = c, agent
				}
			}
		}
	}
	failed := refs.DeleteAll(ctx, r, dels)
	for _, d := range dels {
		c, o := owner[d.Name], out[agentOf[d.Name]]
		if err, bad := failed[d.Name]; bad {
			o.Failed[c.Checkpoint] = err
		} else {
			o.Deleted = append(o.Deleted, c)
		}
	}
	return out
}

func sameOid(o *git.Oid, hex string) bool {
	id, err := git.NewOid(hex)
	return err == nil && o.Equal(id)
}

// treeGone reports whether a worktree agent's tree was removed (docs/checkpoints.md#retention-and-clean:
// the entry is removed or gone).
func treeGone(tree string) bool {
	fi, err := os.Stat(tree)
	return err != nil || !fi.IsDir()
}
