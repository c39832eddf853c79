package checkpoints

import (
	"context"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
)

// ForkRequest is `git venom-checkpoint fork --agent=NEW --from=SRC
// [--through-turn=T]`.
type ForkRequest struct {
	Agent       string
	From        string
	ThroughTurn string
}

// ForkResult is fork's result. checkpoint is the source's checkpoint the
// fork lines up with, as agent.fork_ended carries it (docs/rollback.md#forks), and
// fork_checkpoint the fork's own k1 pointing at the same commit; both are
// null when the source has no such checkpoint.
type ForkResult struct {
	Agent          string  `json:"agent"`
	From           string  `json:"from"`
	ThroughTurn    *string `json:"through_turn"`
	Checkpoint     *string `json:"checkpoint"`
	ForkCheckpoint *string `json:"fork_checkpoint"`
}

// TakeFork registers NEW sharing SRC's tree (so both trees are now guarded)
// and gives it k1, reason fork, at SRC's newest checkpoint whose
// through_turn is the fork point, leaving out mid_turn and overlap ones
// (docs/rollback.md#forks). No file changes.
func TakeFork(ctx context.Context, s *state.Store, req ForkRequest) (*ForkResult, error) {
	for _, id := range []string{req.Agent, req.From} {
		if !ids.ValidAgent(id) {
			return nil, errcode.Newf(errcode.InvalidParamsAgent, map[string]string{"agent": id},
				"%q is not a valid agent id: use [a-z0-9][a-z0-9_-]{0,63}", id)
		}
	}
	if req.ThroughTurn != "" {
		if _, err := ids.ParseTurn(req.ThroughTurn); err != nil {
			return nil, errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": req.ThroughTurn}, "%v", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.Config.Timeout)
	defer cancel()
	tx, err := s.Begin(ctx, lock.Holder{Op: "fork", Agent: req.Agent}, errcode.TimeoutCheckpoint)
	if err != nil {
		return nil, err
	}
	defer tx.End()
	src, err := tx.State.Known(req.From)
	if err != nil {
		return nil, err
	}
	switch {
	case src.State == agents.Archived:
		return nil, errcode.Newf(errcode.ConflictInvalidTransition, map[string]string{"agent": src.ID},
			"agent %s is archived", src.ID)
	case src.OpenRollback != nil:
		return nil, errcode.Newf(errcode.ConflictRollbackRunning, map[string]string{"agent": src.ID},
			"a rollback of agent %s is running", src.ID)
	case tx.State.Agent(req.Agent) != nil:
		return nil, errcode.Newf(errcode.InvalidParamsAgent, map[string]string{"agent": req.Agent},
			"agent %s is registered already; a fork is a new agent", req.Agent)
	case req.Agent == req.From:
		return nil, errcode.Newf(errcode.InvalidParamsAgent, map[string]string{"agent": req.Agent},
			"an agent cannot fork itself")
	}
	var through *agents.Turn
	if req.ThroughTurn != "" && src.Turn(req.ThroughTurn) == nil && src.ForgotTurn(req.ThroughTurn) {
		// A turn older than the fold snapshot holds: the whole log says.
		if err := tx.Whole(); err != nil {
			return nil, err
		}
		src = tx.State.Agent(src.ID)
	}
	if req.ThroughTurn != "" {
		through = src.Turn(req.ThroughTurn)
		if through == nil || through.Dropped || !through.Ended {
			return nil, errcode.Newf(errcode.NotFoundTurn, map[string]string{"agent": src.ID, "turn": req.ThroughTurn},
				"agent %s has no ended turn %s (never taken, still running, or dropped by a rewind)", src.ID, req.ThroughTurn)
		}
	} else {
		through = src.LastEndedTurn()
	}
	res := &ForkResult{Agent: req.Agent, From: src.ID}
	if through != nil {
		id := through.ID
		res.ThroughTurn = &id
	}
	tree, err := TreeOf(ctx, s, src)
	if err != nil {
		return nil, err
	}
	if tree != s.Repo {
		defer tree.Free()
	}
	source := forkPoint(tree, src, res.ThroughTurn)
	// Registering and recording go together: a signal stops the fork
	// before them, or they finish on a context it does not end.
	if err := interrupt.Check(ctx); err != nil {
		return nil, interrupt.Coded(interrupt.Why(ctx), "no fork was registered")
	}
	ctx, stop := interrupt.Detach(ctx, s.Config.Timeout)
	defer stop()
	a, err := Register(tx, Registration{Agent: req.Agent, Isolation: src.Isolation, Harness: src.Harness, Tree: src.Tree,
		Worktree: src.Worktree})
	if err != nil {
		return nil, err
	}
	if source == nil {
		return res, nil
	}
	commit, err := git.NewOid(source.Repos[0].Commit)
	if err != nil {
		return nil, gitErr("commit", err)
	}
	rs := source.Repos[0]
	taken, err := Record(ctx, tx, tree, a, nil, Meta{Reason: Fork, Source: src.ID + "/" + source.Checkpoint,
		Commit: commit, Repo: &rs})
	if err != nil {
		return nil, err
	}
	res.Checkpoint, res.ForkCheckpoint = &source.Checkpoint, &taken.Checkpoint
	return res, nil
}

// forkPoint is the source's newest live checkpoint through that turn (null
// for before the first), not mid_turn or overlap, whose ref still holds it.
func forkPoint(tree *repo.Repo, src *agents.Agent, through *string) *agents.Checkpoint {
	for i := len(src.Checkpoints) - 1; i >= 0; i-- {
		c := src.Checkpoints[i]
		if !c.Live() || c.MidTurn || c.Overlap || len(c.Repos) == 0 {
			continue
		}
		if (c.ThroughTurn == nil) != (through == nil) || (through != nil && *c.ThroughTurn != *through) {
			continue
		}
		if _, err := Find(tree, src, c.Checkpoint); err != nil {
			continue // its ref is gone or moved
		}
		return c
	}
	return nil
}
