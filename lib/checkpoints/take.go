// Package checkpoints takes checkpoints for agents (docs/checkpoints.md#reasons, docs/checkpoints.md#what-a-capture-holds) and lists them
// (docs/json.md agent.checkpoints): registration, turns, dedup, the commit, the
// ref and the log record, all under the repository's lock.
package checkpoints

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/runpace"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// Reasons a caller may ask for (docs/checkpoints.md#names), and the tool's own.
const (
	Manual      = "manual"
	TurnStart   = "turn_start"
	TurnEnd     = "turn_end"
	Takeover    = "takeover"
	Takeback    = "takeback"
	Fork        = "fork"
	PreRollback = "pre_rollback"
	Rollback    = "rollback"
)

// CallerReasons are the reasons --reason accepts.
var CallerReasons = []string{Manual, TurnStart, TurnEnd, Takeover, Takeback}

// Dedups reports whether a reason may reuse the latest checkpoint (docs/checkpoints.md#reuse).
func Dedups(reason string) bool {
	switch reason {
	case Fork, PreRollback, Rollback:
		return false
	}
	return true
}

// Registration is what a capturing command knows of the agent (docs/checkpoints.md#agents-turns-and-states).
type Registration struct {
	Agent     string
	Isolation string // "" when not given
	Parent    string // "" when not given
	Harness   string // "" when not given
	Tree      string // "" for the current worktree; a fork shares its source's
	// Worktree is Tree's identity when Tree is given (a fork: its
	// source's); the current worktree's is read at registration.
	Worktree *worktreeid.ID
}

// Request is one capture.
type Request struct {
	Registration
	Reason string
	Turn   string // --turn, or ""
	Label  *string
	// HarnessTurn, HarnessEnd and HarnessVersion come from hooks.
	HarnessTurn    string
	HarnessSession string
	HarnessEnd     string
	HarnessVersion string
	// Process is the harness process a turn_start's turn runs in.
	Process journal.Process
	// Found is told what the capture found to store (capture.Limits).
	Found func(files int, bytes int64)
}

// Result is agent.checkpoint's result.
type Result struct {
	Agent      string  `json:"agent"`
	Checkpoint *string `json:"checkpoint"`
	Reused     bool    `json:"reused"`
	// Skipped are the paths the capture left out (too big, unreadable,
	// excluded, outside a sparse checkout; docs/checkpoints.md#what-a-capture-holds),
	// as the checkpoint's record lists them: never nil.
	Skipped []journal.Skipped `json:"skipped"`
	// Taken is the new record, when one was made.
	Taken *journal.Entry `json:"-"`
	// Relabeled: a reuse gave the checkpoint the asked label, replacing
	// PreviousLabel (nil: it had none).
	Relabeled     bool    `json:"-"`
	PreviousLabel *string `json:"-"`
	// Unended is the open turn a turn_start closed: it never reported
	// its end, and has no turn_end checkpoint.
	Unended *string `json:"-"`
	// Registered: this capture registered the agent ("new"), or a
	// cleaned one's id again ("again"); empty otherwise.
	Registered string `json:"-"`
}

// CheckAgent refuses an id the registry does not accept
// (invalid_params.agent) before it names a file (the pending mark) or a
// ref, or is logged.
func CheckAgent(id string) error {
	if ids.ValidAgent(id) {
		return nil
	}
	return errcode.Newf(errcode.InvalidParamsAgent, map[string]string{"agent": id},
		"%q is not a valid agent id: use [a-z0-9][a-z0-9_-]{0,63}", id)
}

// Take captures the agent's tree as a checkpoint, waiting for the lock.
func Take(ctx context.Context, s *state.Store, req Request) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Config.Timeout)
	defer cancel()
	if err := CheckAgent(req.Agent); err != nil {
		return nil, err
	}
	mark, err := lock.Begin(s.PendingDir(), req.Agent)
	if err == nil {
		defer mark.End()
	}
	tx, err := s.BeginFor(ctx, lock.Holder{Op: "checkpoint", Agent: req.Agent}, errcode.TimeoutCheckpoint, req.Agent)
	if err != nil {
		return nil, err
	}
	defer tx.End()
	return TakeIn(ctx, tx, req)
}

// TakeIn captures inside a held transaction.
func TakeIn(ctx context.Context, tx *state.Txn, req Request) (*Result, error) {
	s := tx.Store
	if err := checkTurn(tx.State.Agent(req.Agent), req); err != nil {
		return nil, err
	}
	registered := ""
	switch was := tx.State.Agent(req.Agent); {
	case was == nil:
		registered = "new"
	case was.State == agents.Archived:
		registered = "again"
	}
	a, err := Register(tx, req.Registration)
	if err != nil {
		return nil, err
	}
	if a.State == agents.Archived {
		return nil, errcode.Newf(errcode.ConflictInvalidTransition, map[string]string{"agent": a.ID},
			"agent %s is archived", a.ID)
	}
	// An agent of another worktree, or of one moved, replaced or
	// removed, is refused before its turn moves; any other tree that is
	// gone is a failed capture, logged below.
	if err := InThisWorktree(ctx, s, a); err != nil && !errcode.Is(err, errcode.FailedCheckpointGit) {
		return nil, err
	}
	var unended *string
	turn, err := openOrCloseTurn(tx, a, req, &unended)
	if err != nil {
		return nil, err
	}
	res := &Result{Agent: a.ID, Skipped: []journal.Skipped{}, Unended: unended, Registered: registered}
	if !s.Config.Enabled && (req.Reason == TurnStart || req.Reason == TurnEnd) {
		return res, nil // venom.enabled=false stops only automatic captures
	}
	tree, err := treeOf(ctx, s, a)
	if err == nil {
		defer func() {
			if tree != s.Repo {
				tree.Free()
			}
		}()
		res, err = capture1(ctx, tx, tree, a, req, turn)
		if res != nil {
			res.Unended, res.Registered = unended, registered
		}
	}
	if err != nil {
		e := errcode.From(err, errcode.FailedCheckpointGit)
		_, _ = tx.Append(journal.CheckpointFailed, journal.Failed{Agent: a.ID, Reason: req.Reason,
			Code: string(e.Code), Turn: turn, Repo: ".", At: journal.Stamp(journal.Now())})
		return nil, e
	}
	afterCapture(ctx, tx, a, req)
	return res, nil
}

// treeOf opens the agent's tree for a command that reads or writes its
// files (a capture, a dry run, a rollback, a diff with the files, a fork),
// only in the worktree the command runs in, as git does
// (docs/checkpoints.md#worktrees): another worktree's agent is
// invalid_params.agent, with where to run it; one moved, replaced, linked
// over or removed is conflict.tree_stale; any other tree that is gone,
// failed.checkpoint_git (tree_missing).
func treeOf(ctx context.Context, s *state.Store, a *agents.Agent) (*repo.Repo, error) {
	if a.Tree == s.Repo.Top {
		return s.Repo, nil
	}
	if id, stale := worktreeid.Of(s.Repo.Top, s.Repo.GitDir, s.Repo.CommonDir); stale == nil &&
		a.Worktree != nil && a.Worktree.Made != "" && *a.Worktree == id {
		return nil, errcode.Newf(errcode.ConflictTreeStale, map[string]string{"agent": a.ID, "tree": a.Tree, "reason": worktreeid.Moved},
			"agent %s's worktree was moved here (git worktree move); it registered at %s", a.ID, a.Tree).
			Shorter("agent %s's worktree was moved here (git worktree move)", a.ID).
			Hint("it registered at:").Hint("  %s", a.Tree).
			Hint("git-venom keeps an agent's path; move the worktree back to go on with it,").
			Hint("or archive it, which removes its checkpoints:").Hint("  git venom-checkpoint clean --agent=%s", a.ID)
	}
	r, err := OpenTreeOf(ctx, s, a)
	if err != nil {
		if errcode.Is(err, errcode.FailedCheckpointGit) && a.Worktree != nil && a.Worktree.Made != "" {
			if to, moved := worktreeid.MovedTo(a.Worktree); moved {
				return nil, errcode.Newf(errcode.ConflictTreeStale, map[string]string{"agent": a.ID, "tree": a.Tree, "reason": worktreeid.Moved},
					"agent %s's worktree was moved (git worktree move) from %s to %s", a.ID, a.Tree, to).
					Shorter("agent %s's worktree was moved (git worktree move)", a.ID).
					Hint("it registered at:").Hint("  %s", a.Tree).Hint("it is now at:").Hint("  %s", to).
					Hint("git-venom keeps an agent's path; move the worktree back to go on with it,").
					Hint("or archive it, which removes its checkpoints:").Hint("  git venom-checkpoint clean --agent=%s", a.ID)
			}
			if e, ok := errcode.As(err); ok && e.Data == (errcode.RepoReason{Repo: ".", Reason: "tree_missing"}) {
				return nil, removed(a)
			}
		}
		return nil, err
	}
	if stale := StillItsTree(a, r); stale != nil {
		r.Free()
		return nil, stale
	}
	r.Free()
	return nil, errcode.Newf(errcode.InvalidParamsAgent, map[string]string{"agent": a.ID, "tree": a.Tree},
		"agent %s works in another worktree; a command acts on the worktree it runs in", a.ID).
		Shorter("agent %s works in another worktree", a.ID).
		Hint("its worktree:").Hint("  %s", a.Tree).
		Hint("run the command there (git -C <that path> ...), or name this worktree's").
		Hint("own agent: --agent=<id> registers one with its first checkpoint")
}

// removed is conflict.tree_stale for an agent whose linked worktree is
// gone from its path: removed with git worktree remove, or deleted, which
// leaves git listing it until git worktree prune.
func removed(a *agents.Agent) error {
	e := errcode.Newf(errcode.ConflictTreeStale, map[string]string{"agent": a.ID, "tree": a.Tree, "reason": worktreeid.Removed},
		"agent %s's worktree %s was removed", a.ID, a.Tree).
		Shorter("agent %s's worktree was removed", a.ID).
		Hint("it was at:").Hint("  %s", a.Tree)
	if worktreeid.Listed(a.Worktree) {
		e.Hint("its folder was deleted; git lists it as prunable until you run:").Hint("  git worktree prune")
	}
	return e.Hint("its checkpoints stay readable until it is cleaned:").Hint("  git venom-checkpoint list --agent=%s", a.ID).
		Hint("to archive the agent, which removes its checkpoints:").Hint("  git venom-checkpoint clean --agent=%s", a.ID)
}

// OpenTreeOf opens the agent's tree wherever it is, for the checks that
// look at every agent's tree (doctor); the caller frees it unless it is
// s.Repo. Commands use treeOf.
func OpenTreeOf(ctx context.Context, s *state.Store, a *agents.Agent) (*repo.Repo, error) {
	if a.Tree == s.Repo.Top {
		return s.Repo, nil
	}
	r, err := repo.OpenTree(ctx, a.Tree, s.Environ)
	if err != nil {
		return nil, err
	}
	if !r.SameRepository(s.Repo) {
		r.Free()
		return nil, errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "other_repository"},
			"agent %s's tree %s now belongs to another repository", a.ID, a.Tree)
	}
	return r, nil
}

// Register returns the agent, registering it the first time (docs/checkpoints.md#agents-turns-and-states,
// 8.21: isolation and parent are fixed at registration).
func Register(tx *state.Txn, reg Registration) (*agents.Agent, error) {
	// An archived agent's id registers anew (agents.reopen).
	if a := tx.State.Agent(reg.Agent); a != nil && a.State != agents.Archived {
		if reg.Isolation != "" && reg.Isolation != a.Isolation {
			return nil, errcode.Newf(errcode.InvalidParamsIsolation,
				map[string]string{"agent": a.ID, "isolation": a.Isolation},
				"agent %s was registered with isolation %s", a.ID, a.Isolation)
		}
		if reg.Parent != "" && reg.Parent != a.Parent {
			return nil, errcode.Newf(errcode.InvalidParamsParent, map[string]string{"agent": a.ID, "parent": a.Parent},
				"agent %s was registered with parent %q", a.ID, a.Parent)
		}
		return a, nil
	}
	if err := CheckAgent(reg.Agent); err != nil {
		return nil, err // never registered, nor logged, under an id that is no name
	}
	iso := reg.Isolation
	if iso == "" {
		iso = agents.InPlace
	}
	switch iso {
	case agents.InPlace, agents.Worktree, agents.Copy:
	default:
		return nil, errcode.Newf(errcode.InvalidParamsIsolation, map[string]string{"isolation": iso},
			"isolation is in_place, worktree or copy, not %q", iso)
	}
	var parent *string
	if reg.Parent != "" {
		if !ids.ValidAgent(reg.Parent) {
			return nil, errcode.Newf(errcode.InvalidParamsParent, map[string]string{"parent": reg.Parent},
				"%q is not a valid agent id", reg.Parent)
		}
		parent = &reg.Parent
	}
	harness := reg.Harness
	if harness == "" {
		harness = "none"
	}
	tree, wt := reg.Tree, reg.Worktree
	if tree == "" {
		r := tx.Store.Repo
		tree = r.Top
		// A worktree whose links are broken gets none; a rollback then
		// checks its path and links only (worktreeid.Check).
		if id, stale := worktreeid.Of(r.Top, r.GitDir, r.CommonDir); stale == nil {
			wt = &id
		}
	}
	if _, err := tx.Append(journal.AgentRegistered, journal.Registered{Agent: reg.Agent, Tree: tree,
		Isolation: iso, Harness: harness, Parent: parent, Worktree: wt}); err != nil {
		return nil, err
	}
	return tx.State.Agent(reg.Agent), nil
}

// checkTurn refuses a --turn the request cannot take (docs/checkpoints.md#turns-and-through_turn) before
// anything is written: a bad request registers no agent and ends no turn.
// a is nil for an agent not registered yet.
func checkTurn(a *agents.Agent, req Request) error {
	if req.Turn == "" {
		// The next turn's number would be past ids.MaxN, a name no
		// command reads (reached only through --turn).
		opens := req.Reason == TurnStart || req.Reason == TurnEnd && a != nil && a.OpenTurn == nil
		if opens && a != nil && a.LastTurnN >= ids.MaxN {
			return errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": "t" + strconv.Itoa(a.LastTurnN+1)},
				"agent %s has used the last turn number, %s", a.ID, ids.Turn(ids.MaxN))
		}
		return nil
	}
	n, err := ids.ParseTurn(req.Turn)
	if err != nil {
		return errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": req.Turn}, "%v", err)
	}
	last := 0
	var open *agents.Turn
	if a != nil {
		last, open = a.LastTurnN, a.OpenTurn
	}
	switch req.Reason {
	case TurnStart:
		if n <= last {
			return errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": req.Turn},
				"turn %s is not new: the last turn is %s", req.Turn, ids.Turn(last))
		}
	case TurnEnd:
		if open != nil && req.Turn != open.ID {
			return errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": req.Turn, "open": open.ID},
				"turn %s is open; a turn_end closes it", open.ID)
		}
		if open == nil && n <= last {
			return errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": req.Turn},
				"no turn is open, and %s is not new", req.Turn)
		}
	default:
		return errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": req.Turn},
			"--turn goes with --reason=turn_start or turn_end")
	}
	return nil
}

// openOrCloseTurn logs the turn records a turn_start or turn_end implies
// (docs/checkpoints.md#agents-turns-and-states, docs/checkpoints.md#turns-and-through_turn) and returns the checkpoint's turn. checkTurn has
// already accepted req.Turn.
// unended is set to the open turn a turn_start closes.
func openOrCloseTurn(tx *state.Txn, a *agents.Agent, req Request, unended **string) (*string, error) {
	switch req.Reason {
	case TurnStart:
		if a.OpenTurn != nil {
			// The open turn never reported its end; it ends here, and the
			// window up to now is a gap (docs/rollback.md#classes).
			closed := a.OpenTurn.ID // the fold clears OpenTurn as it appends
			if _, err := tx.Append(journal.TurnEnded, journal.TurnEnd{Agent: a.ID, Turn: closed, NoEnd: true}); err != nil {
				return nil, err
			}
			*unended = &closed
		}
		id := req.Turn
		if id == "" {
			id = ids.Turn(a.LastTurnN + 1)
		}
		if _, err := tx.Append(journal.TurnStarted, journal.TurnStart{Agent: a.ID, Turn: id,
			HarnessTurn: req.HarnessTurn, HarnessSession: req.HarnessSession, Process: req.Process}); err != nil {
			return nil, err
		}
		return &id, nil
	case TurnEnd:
		end := journal.TurnEnd{Agent: a.ID, HarnessTurn: req.HarnessTurn, HarnessSession: req.HarnessSession, HarnessEnd: req.HarnessEnd,
			HarnessVersion: req.HarnessVersion}
		if a.OpenTurn != nil {
			end.Turn = a.OpenTurn.ID
		} else {
			// A turn the harness started with no turn_start (docs/checkpoints.md#reasons).
			end.Turn, end.NoStart = req.Turn, true
			if end.Turn == "" {
				end.Turn = ids.Turn(a.LastTurnN + 1)
			}
		}
		if _, err := tx.Append(journal.TurnEnded, end); err != nil {
			return nil, err
		}
		return &end.Turn, nil
	default:
		if a.OpenTurn != nil && req.Reason == Manual {
			id := a.OpenTurn.ID
			return &id, nil
		}
		return nil, nil
	}
}

// largeCapture is the number of files to store past which a capture
// collects garbage at 1.5x its live heap instead of cli's 5x: its lists of
// those files stay live until its tree is written, and 5x of them was most
// of its resident set (a capture of 100,000 new files: 173 MB resident,
// 95 MB at 1.5x, for the same CPU).
const largeCapture = 20000

func collectOftenWhenLarge(files int) {
	if files > largeCapture {
		runpace.LargeHeap()
	}
}

// capture1 captures the tree and records the checkpoint, or the reuse of the
// latest one (docs/checkpoints.md#reuse).
func capture1(ctx context.Context, tx *state.Txn, tree *repo.Repo, a *agents.Agent, req Request, turn *string) (*Result, error) {
	s := tx.Store
	t0 := time.Now()
	lim := capture.LimitsOf(s.Config)
	lim.Found = func(files int, bytes int64) {
		collectOftenWhenLarge(files)
		if req.Found != nil {
			req.Found(files, bytes)
		}
	}
	snap, err := capture.TakeHeld(ctx, tree, s.TmpDir(), lim)
	testhook.Timed("capture", t0)
	if err != nil {
		return nil, err
	}
	res := &Result{Agent: a.ID, Skipped: snap.Skipped}
	if res.Skipped == nil {
		res.Skipped = []journal.Skipped{}
	}
	var through *string
	if t := a.LastEndedTurn(); t != nil {
		id := t.ID
		through = &id
	}
	midTurn := req.Reason == Manual && a.OpenTurn != nil
	// Refs a crashed capture left are adopted first, so that the dedup
	// compares with what they hold (docs/checkpoints.md#the-log, docs/checkpoints.md#reuse).
	if err := adoptLeftovers(tx, tree, a); err != nil {
		return nil, err
	}
	if Dedups(req.Reason) {
		// A latest checkpoint whose ref is gone holds nothing a rollback
		// could use (docs/checkpoints.md#the-log): the capture makes a new one instead.
		if latest := a.Latest(); latest != nil && sameState(tree, latest, snap) && Usable(tree, a, latest) {
			rec := journal.Reused{Agent: a.ID, Checkpoint: latest.Checkpoint,
				Reason: req.Reason, Turn: turn, At: journal.Stamp(journal.Now()), Label: req.Label}
			if req.Label != nil {
				res.Relabeled, res.PreviousLabel = true, latest.Label
				if latest.Label != nil && *latest.Label == *req.Label {
					rec.Label = nil // its newest label already: no relabel to log
				} else {
					rec.PreviousLabel = latest.Label
				}
			}
			if _, err := tx.Append(journal.CheckpointReused, rec); err != nil {
				return nil, err
			}
			id := latest.Checkpoint
			res.Checkpoint, res.Reused = &id, true
			return res, nil
		}
	}
	taken, err := Record(ctx, tx, tree, a, snap, Meta{Reason: req.Reason, Turn: turn, ThroughTurn: through,
		MidTurn: midTurn, Label: req.Label})
	for try := 1; err != nil && capture.Gone(err) && try < 3; try++ {
		// A person's gc --prune=now deleted an object the capture found
		// stored, or git wrote loose, before the commit's pack held it:
		// the capture taken again stores it anew.
		if snap, err = capture.TakeHeld(ctx, tree, s.TmpDir(), lim); err != nil {
			return nil, err
		}
		if res.Skipped = snap.Skipped; res.Skipped == nil {
			res.Skipped = []journal.Skipped{}
		}
		taken, err = Record(ctx, tx, tree, a, snap, Meta{Reason: req.Reason, Turn: turn, ThroughTurn: through,
			MidTurn: midTurn, Label: req.Label})
	}
	if err != nil {
		return nil, err
	}
	res.Checkpoint, res.Taken = &taken.Checkpoint, taken
	return res, nil
}

// sameState: every tree, HEAD and skipped path equal the checkpoint's
// (docs/checkpoints.md#reuse). A path skipped now that was not then (a
// big file grown, a folder git cannot open) is a change the checkpoint
// does not hold: "nothing changed" would hide it.
func sameState(r *repo.Repo, c *agents.Checkpoint, snap *capture.Snapshot) bool {
	if len(c.Repos) != 1 {
		return false
	}
	rs := c.Repos[0]
	if !slices.Equal(rs.Skipped, snap.Skipped) {
		return false
	}
	head := snap.HeadString()
	if (rs.Head == nil) != (head == nil) || (head != nil && *rs.Head != *head) {
		return false
	}
	id, err := git.NewOid(rs.Commit)
	if err != nil {
		return false
	}
	info, err := refs.ReadCommit(r, id)
	return err == nil && info.Tree.Equal(snap.Tree)
}

// Meta is what a checkpoint record says besides its snapshot.
type Meta struct {
	Reason      string
	Turn        *string
	ThroughTurn *string
	MidTurn     bool
	Overlap     bool
	Label       *string
	// Source names the checkpoint a fork's k1 was taken from ("a2/k3");
	// Commit and Repo are that checkpoint's commit and repo state, which
	// the new ref points at and the record repeats (docs/rollback.md#forks).
	Source string
	Commit *git.Oid
	Repo   *journal.RepoState
	// Anchors are commits refs reach, besides HEAD and the agent's latest
	// checkpoint, whose objects the new commit need not write again
	// (capture.StoreCommit): a rollback's target.
	Anchors []*git.Oid
}

// Record commits a snapshot as the agent's next checkpoint: commit, ref
// created only if absent, then checkpoint.taken. A ref already at the next
// number is adopted when its trailers name this agent and id, else skipped
// (docs/checkpoints.md#the-log, docs/checkpoints.md#refs).
func Record(ctx context.Context, tx *state.Txn, tree *repo.Repo, a *agents.Agent, snap *capture.Snapshot, m Meta) (*journal.Entry, error) {
	defer testhook.Timed("record", time.Now())
	now := journal.Now()
	for n := a.LastCkptN + 1; ; n++ {
		if interrupt.Signalled(ctx) {
			return nil, interrupt.Coded(interrupt.Why(ctx), "stopped before the checkpoint's ref; none was made")
		}
		if err := ctx.Err(); err != nil {
			return nil, errcode.Newf(errcode.TimeoutCheckpoint, map[string]string{"repo": "."},
				"the capture passed venom.timeout").Wrap(err)
		}
		id := ids.Checkpoint(n)
		existing, err := refs.Resolve(tree, a.ID, n)
		if errors.Is(err, refs.ErrSymbolic) {
			continue // never written through; skipped as a foreign ref is
		}
		if err != nil {
			return nil, gitErr("ref", err)
		}
		if existing != nil {
			if err := adopt(tx, tree, a, n, existing); err != nil {
				return nil, err
			}
			continue
		}
		commit := m.Commit
		if commit == nil {
			commit, err = writeCommit(tree, snap, refs.Message(a.ID, id, m.Reason, m.Turn), now, anchors(tree, a, snap, m))
			if err != nil {
				return nil, gitErr("commit", err)
			}
		}
		if err := refs.Create(tree, a.ID, n, commit); err != nil {
			if errors.Is(err, refs.ErrExists) {
				continue
			}
			return nil, gitErr("update_ref", err)
		}
		// A crash here leaves a ref no record names: the next capture adopts it.
		if err := testhook.PointIn(ctx, "after-ref"); err != nil {
			_ = refs.Delete(tree, a.ID, n, commit)
			return nil, gitErr("update_ref", err)
		}
		rs := journal.RepoState{Repo: ".", Path: tree.Top, Commit: commit.String()}
		if m.Repo != nil {
			rs.Head, rs.Branch, rs.Skipped, rs.Submodules = m.Repo.Head, m.Repo.Branch, m.Repo.Skipped, m.Repo.Submodules
		} else {
			rs.Head, rs.Branch, rs.Skipped, rs.Submodules = snap.HeadString(), snap.Branch, snap.Skipped, snap.Submodules
		}
		rec := journal.Taken{Agent: a.ID, Checkpoint: id, Reason: m.Reason, Turn: m.Turn, ThroughTurn: m.ThroughTurn,
			At: journal.Stamp(now), MidTurn: m.MidTurn, Overlap: m.Overlap, Label: m.Label, Source: m.Source,
			Repos: []journal.RepoState{rs}}
		e, err := tx.Append(journal.CheckpointTaken, rec)
		if err != nil {
			// Leave no ref the log does not name.
			_ = refs.Delete(tree, a.ID, n, commit)
			return nil, err
		}
		return &e, nil
	}
}

// anchors are the commits a new checkpoint of snap can rely on as
// reachable: HEAD's (its parent, which HEAD's reflog keeps), the agent's
// latest checkpoint whose ref holds it, and m.Anchors.
func anchors(r *repo.Repo, a *agents.Agent, snap *capture.Snapshot, m Meta) []*git.Oid {
	list := append([]*git.Oid{snap.Head}, m.Anchors...)
	if latest := a.Latest(); latest != nil && len(latest.Repos) == 1 && Usable(r, a, latest) {
		if id, err := git.NewOid(latest.Repos[0].Commit); err == nil {
			list = append(list, id)
		}
	}
	return list
}

// adoptLeftovers adopts the refs at the agent's next numbers that a crashed
// capture left (foreign ones are left for Record to skip).
func adoptLeftovers(tx *state.Txn, tree *repo.Repo, a *agents.Agent) error {
	for n := a.LastCkptN + 1; ; n++ {
		existing, err := refs.Resolve(tree, a.ID, n)
		if errors.Is(err, refs.ErrSymbolic) {
			continue // left for Record to skip
		}
		if err != nil {
			return gitErr("ref", err)
		}
		if existing == nil {
			return nil
		}
		if err := adopt(tx, tree, a, n, existing); err != nil {
			return err
		}
	}
}

// adopt logs a ref a crashed capture left at number n, when its commit is
// one a capture could have made (adoptable); any other ref is skipped, as
// a foreign one is, and never adopted.
func adopt(tx *state.Txn, tree *repo.Repo, a *agents.Agent, n int, commit *git.Oid) error {
	id := ids.Checkpoint(n)
	info, err := refs.ReadCommit(tree, commit)
	if err != nil || !adoptable(tree, info, a.ID, id) {
		return nil
	}
	var turn *string
	if t := info.Trailers["Venom-Turn"]; t != "" {
		turn = &t
	}
	var head *string
	var branch string
	if info.Parent != nil {
		h := info.Parent.String()
		head = &h
	}
	var through *string
	if t := a.LastEndedTurn(); t != nil {
		tid := t.ID
		through = &tid
	}
	reason := info.Trailers["Venom-Reason"]
	_, err = tx.Append(journal.CheckpointTaken, journal.Taken{Agent: a.ID, Checkpoint: id, Reason: reason, Turn: turn,
		ThroughTurn: through, At: journal.Stamp(info.When), Repos: []journal.RepoState{{Repo: ".", Path: tree.Top,
			Commit: commit.String(), Head: head, Branch: branch, Skipped: []journal.Skipped{},
			Submodules: []journal.Submodule{}}}})
	return err
}

// reasons are every reason a checkpoint commit can carry.
var reasons = map[string]bool{Manual: true, TurnStart: true, TurnEnd: true, Takeover: true, Takeback: true,
	Fork: true, PreRollback: true, Rollback: true}

// adoptable: the commit's trailers are well-formed and name this agent and
// id (docs/checkpoints.md#the-log), and its tree holds only paths git would check out. A ref
// under refs/venom may have been fetched, unpacked or written by another
// party; adopting it would let its tree and reason through to a rollback.
func adoptable(tree *repo.Repo, info *refs.CommitInfo, agent, id string) bool {
	return Trailers(info, agent, id) && refs.UnsafePath(tree, info.Tree, nil) == nil
}

// Trailers: a commit's trailers are those a capture writes for this agent
// and id: a known reason, a turn id if any, nothing that needs quoting.
func Trailers(info *refs.CommitInfo, agent, id string) bool {
	t := info.Trailers
	if t["Venom-Agent"] != agent || t["Venom-Checkpoint"] != id || !reasons[t["Venom-Reason"]] {
		return false
	}
	if turn := t["Venom-Turn"]; turn != "" {
		if _, err := ids.ParseTurn(turn); err != nil {
			return false
		}
	}
	// A capture's trailers never need quoting (ids, reasons, turns): one
	// that does carries control characters or the like.
	for _, v := range t {
		if quote.Needs(v) {
			return false
		}
	}
	return true
}

func gitErr(step string, err error) error {
	return errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: step},
		"the capture failed at %s", step).Wrap(err)
}

// Pending reports whether a capture of the agent is under way or waiting
// (docs/checkpoints.md#agents-turns-and-states).
func Pending(s *state.Store, agent string) bool {
	return lockMarked(s.PendingDir(), agent)
}

var lockMarked = lock.Marked

// now is used for ages in human output.
var now = time.Now

var _ = fmt.Sprintf
var _ = os.Getpid
