package rollback

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/packset"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
)

// DryRun computes the plan and writes nothing: no ref, no log record, no
// file (docs/rollback.md#the-plan). It takes no lock, and its temporary index lives outside
// the repository.
func DryRun(ctx context.Context, s *state.Store, req Request) (*plan.Plan, error) {
	if err := Validate(&req); err != nil {
		return nil, err
	}
	// The capture's pack holds no ref's objects: it is let go at the end.
	defer packset.Release()
	// Reading the log and the capture (git status) are a dry run's two
	// main costs. When the agent works in this very worktree, which its
	// registration (near the log's start) says, the capture starts then
	// and runs beside the rest of the read.
	var early *earlyCapture
	defer func() {
		if early != nil {
			early.wait()
			early.free()
		}
	}()
	l, st, err := s.ReadWatching(func(e *journal.Entry) {
		if early == nil && e.Type == journal.AgentRegistered && e.Agent == req.Local() && e.Tree == s.Repo.Top {
			early = startCapture(ctx, s)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := state.Intact(l, "no rollback runs"); err != nil {
		return nil, err
	}
	c, err := preflight(ctx, s, st, &req, false, false)
	if err != nil {
		return nil, err
	}
	if st.Partial(c.agent.Tree, c.sinceSeq()) {
		// A target older than the history the fold snapshot holds:
		// the plan reads its windows from a fold of the whole log.
		c.free(s)
		if _, st, err = s.ReadWhole(); err != nil {
			return nil, err
		}
		if c, err = preflight(ctx, s, st, &req, false, false); err != nil {
			return nil, err
		}
	}
	defer c.free(s)
	var snap *capture.Snapshot
	if early != nil && c.tree == s.Repo {
		snap, err = early.wait()
	} else {
		snap, err = captureInto(ctx, s, c.tree)
	}
	if err == nil {
		snap, err = holdS(c, snap, func() (*capture.Snapshot, error) { return captureInto(ctx, s, c.tree) })
	}
	if err != nil {
		return nil, err
	}
	// A person's gc here deletes whatever S relies on that nothing holds.
	if err := testhook.PointIn(ctx, "dry-run-captured"); err != nil {
		return nil, err
	}
	if req.Undo {
		if err := withUnseen(ctx, s, c.tree, c.agent, snap); err != nil {
			return nil, err
		}
	}
	defer testhook.Timed("dry-build", time.Now())
	p, err := plan.Build(ctx, plan.Input{Repo: c.tree, State: st, Agent: c.agent, Target: c.target, Snapshot: snap,
		Options: req.Options, Guarded: c.guarded, Head: c.head, Exclude: s.Config.Exclude,
		HookFiles: req.HookFiles(c.tree.Top),
		Copy:      c.copy, Since: c.since, Revert: c.revert})
	if err == nil && c.tree == s.Repo {
		p.Kept = emptied(p, req.Cwd)
	}
	return p, err
}

// earlyCapture is a dry run's capture of its own worktree, running on a
// goroutine with a libgit2 handle of its own. It is never cancelled: a
// capture stopped half-way throws away the private index, which costs the
// next capture far more than waiting costs a failed dry run.
type earlyCapture struct {
	tree *repo.Repo
	done chan struct{}
	snap *capture.Snapshot
	err  error
}

func startCapture(ctx context.Context, s *state.Store) *earlyCapture {
	e := &earlyCapture{tree: s.Repo.Twin(), done: make(chan struct{})}
	go func() {
		defer close(e.done)
		e.snap, e.err = captureInto(ctx, s, e.tree)
	}()
	return e
}

func (e *earlyCapture) wait() (*capture.Snapshot, error) {
	<-e.done
	return e.snap, e.err
}

func (e *earlyCapture) free() { e.tree.Free() }

// captureInto captures tree as a dry run does: its temporary index lives
// outside the repository, in the command's TMPDIR.
func captureInto(ctx context.Context, s *state.Store, tree *repo.Repo) (*capture.Snapshot, error) {
	tmp, err := os.MkdirTemp(gitcli.Getenv(s.Environ, "TMPDIR"), "venom-dry-run-")
	if err != nil {
		return nil, errcode.Newf(errcode.FailedState, nil, "cannot make a temporary folder").Wrap(err)
	}
	defer os.RemoveAll(tmp)
	defer testhook.Timed("dry-capture", time.Now())
	return capture.Take(ctx, tree, tmp, limits(s))
}

func limits(s *state.Store) capture.Limits {
	return capture.LimitsOf(s.Config)
}

// Run is the real call (docs/rollback.md#the-real-call): plan check, safety checkpoint, the
// conversation, the files, HEAD, the rollback capture and rollback.ended.
func Run(ctx context.Context, s *state.Store, req Request) (_ *plan.Result, err error) {
	defer func() { err = stoppedEarly(ctx, err) }()
	if err := Validate(&req); err != nil {
		return nil, err
	}
	// A rollback already running fails at once instead of waiting for the lock.
	_, st, err := s.Read()
	if err != nil {
		return nil, err
	}
	if _, err := preflight(ctx, s, st, &req, false, true); err != nil {
		return nil, err
	}
	lockCtx, cancel := context.WithTimeout(ctx, s.Config.Timeout)
	defer cancel()
	tx, err := s.Begin(lockCtx, lock.Holder{Op: "rollback", Agent: req.Local()}, errcode.TimeoutLock)
	if err != nil {
		return nil, err
	}
	defer tx.End()
	if err := state.Intact(tx.Log, "no rollback runs"); err != nil {
		return nil, err
	}
	// A turn whose harness has exited is ended first, as its hook would
	// have: the plan the dry run showed counted it ended (plan.classify).
	if a, err := tx.State.Named(req.Local()); err == nil {
		if err := checkpoints.EndExited(ctx, tx, a); err != nil {
			return nil, err
		}
	}

	// Step 1: repeat the preflight and the capture, and compare the plans.
	t0 := time.Now()
	c, err := preflight(ctx, s, tx.State, &req, true, false)
	if err != nil {
		return nil, err
	}
	if tx.State.Partial(c.agent.Tree, c.sinceSeq()) {
		// As in the dry run: a fold of the whole log, then the same checks.
		c.free(s)
		if err := tx.Whole(); err != nil {
			return nil, err
		}
		if c, err = preflight(ctx, s, tx.State, &req, true, false); err != nil {
			return nil, err
		}
	}
	defer c.free(s)
	testhook.Timed("real-preflight", t0)
	t0 = time.Now()
	snap, err := capture.Take(ctx, c.tree, s.TmpDir(), limits(s))
	if err == nil {
		snap, err = holdS(c, snap, func() (*capture.Snapshot, error) {
			return capture.Take(ctx, c.tree, s.TmpDir(), limits(s))
		})
	}
	testhook.Timed("real-capture-s", t0)
	t0 = time.Now()
	if err != nil {
		return nil, err
	}
	if err := testhook.PointIn(ctx, "rollback-captured"); err != nil {
		return nil, err
	}
	if req.Undo {
		if err := withUnseen(ctx, s, c.tree, c.agent, snap); err != nil {
			return nil, err
		}
	}
	if c.revert != nil {
		// The merged files' blobs go into the repository now: the writes
		// place them (the dry run only hashed them).
		c.revert.Write = true
	}
	p, err := plan.Build(ctx, plan.Input{Repo: c.tree, State: tx.State, Agent: c.agent, Target: c.target,
		Snapshot: snap, Options: req.Options, Guarded: c.guarded, Head: c.head, Exclude: s.Config.Exclude,
		HookFiles: req.HookFiles(c.tree.Top),
		Copy:      c.copy, Since: c.since, Revert: c.revert})
	if err != nil {
		return nil, err
	}
	testhook.Timed("real-build", t0)
	if p.ID != req.Plan {
		return nil, staleError(req, p)
	}
	if p.Revert != nil && p.Empty() {
		// A revert that writes no file changes nothing: no safety
		// checkpoint, no rollback records, nothing for --undo. Whole-file
		// conflicts stay conflicts (exit 5), as the dry run at a terminal
		// decides.
		if err := p.NothingReverted(); err != nil {
			return nil, err
		}
		res := p.Result()
		res.DryRun, res.Plan, res.Guarded = false, nil, nil
		return res, nil
	}
	if c.tree == s.Repo {
		p.Kept = emptied(p, req.Cwd)
	}
	r := &runner{ctx: ctx, tx: tx, p: p, snap: snap, conv: conversation.Options{Materialize: req.Materialize},
		prog: req.Progress}
	return r.run()
}

// staleError is conflict.rollback_stale: it says which choices differ
// where the plan id is this plan's with other choices on the same tree
// and HEAD (plan.MadeWith); else the tree, HEAD or another choice does.
func staleError(req Request, p *plan.Plan) error {
	data := map[string]string{"checkpoint": req.Checkpoint}
	if was, ok := p.MadeWith(req.Plan); ok {
		var then, now []string
		add := func(a, b string) {
			if a != b {
				then, now = append(then, a), append(now, b)
			}
		}
		add(choice("outside", was.Outside), choice("outside", p.Options.Outside))
		add(choice("restore", was.Restore), choice("restore", p.Options.Restore))
		add(choice("keep-head", fmt.Sprint(was.KeepHead)), choice("keep-head", fmt.Sprint(p.Options.KeepHead)))
		add(choice("conflicts", was.Conflicts), choice("conflicts", p.Options.Conflicts))
		if len(then) > 0 {
			return errcode.Newf(errcode.ConflictRollbackStale, data,
				"plan %s was made %s; this call is %s; the tree and HEAD are as it found them",
				req.Plan, strings.Join(then, ", "), strings.Join(now, ", ")).
				Shorter("the plan was made with other choices").
				Hint("plan %s was made %s;", req.Plan, strings.Join(then, ", ")).
				Hint("this call is %s", strings.Join(now, ", ")).
				Hint("the tree and HEAD are as it found them").
				Hint("run the dry run again with the choices you want, then quote its plan")
		}
	}
	if p.MergesLines() {
		// A revert's merges follow settings S's tree does not hold.
		return errcode.Newf(errcode.ConflictRollbackStale, data,
			"the tree, HEAD, a choice or what the line merge writes (merge.conflictStyle, the merge or "+
				"conflict-marker-size attribute) differs from plan %s; run the dry run again", req.Plan).
			Shorter("the tree, HEAD, a choice or the merge differs from the plan").
			Hint("the merge follows merge.conflictStyle and the merge and conflict-marker-size attributes").
			Hint("run the dry run again; quote its plan only after a person has seen it")
	}
	return errcode.Newf(errcode.ConflictRollbackStale, data,
		"the tree, HEAD or a choice differs from plan %s; run the dry run again", req.Plan).
		Shorter("the tree, HEAD or a choice differs from the plan").
		Hint("run the dry run again; quote its plan only after a person has seen it")
}

// choice is a flag as a person reads it: "with --outside=keep", or
// "without --outside" where the default was taken.
func choice(flag, value string) string {
	switch value {
	case "", "false":
		return "without --" + flag
	case "true":
		return "with --" + flag
	}
	return "with --" + flag + "=" + value
}

// runner holds one real call from the safety checkpoint on.
type runner struct {
	ctx    context.Context
	tx     *state.Txn
	p      *plan.Plan
	snap   *capture.Snapshot
	safety string
	conv   conversation.Options
	prog   *Progress
	// filesStart is when step 4 began writing (zero before).
	filesStart time.Time
}

func (r *runner) run() (*plan.Result, error) {
	p, tx := r.p, r.tx
	a := p.Agent
	// Step 2: the safety checkpoint, from S: nothing is written before it.
	var through *string
	if t := a.LastEndedTurn(); t != nil {
		id := t.ID
		through = &id
	}
	// A person's repack here drops whatever S found already stored in a
	// pack no ref reaches yet (the dry run's): see safetyHeld.
	if err := testhook.PointIn(r.ctx, "rollback-before-safety"); err != nil {
		return nil, err
	}
	t0 := time.Now()
	safety, err := checkpoints.Record(r.ctx, tx, p.Repo, a, r.snap, checkpoints.Meta{Reason: checkpoints.PreRollback,
		ThroughTurn: through, Anchors: targetCommit(p)})
	if err != nil {
		return nil, err
	}
	r.safety = safety.Checkpoint
	if err := safetyHeld(p.Repo, p.Changes); err != nil {
		return nil, err
	}
	testhook.Timed("real-safety", t0)
	if _, err := tx.Append(journal.RollbackStarted, journal.RollbackStart{Agent: a.ID, Checkpoint: p.Target.Checkpoint,
		Safety: r.safety, Restore: p.Restore, Plan: p.ID, Paths: p.Paths.Strings(), Copy: copyID(p),
		Revert: revertName(p)}); err != nil {
		return nil, err
	}
	if err := testhook.PointIn(r.ctx, "rollback-after-safety"); err != nil {
		return nil, r.end(errcode.From(err, errcode.FailedRollbackUndone))
	}
	// Step 3: the conversation, before any file moves.
	conv := p.Conversation
	var binding *journal.Binding
	if conv.Rewinds {
		if p.Target.ThroughTurn == nil {
			// Before the first turn no turn is kept: the conversation is
			// rewound to a new, empty one, named now where the harness
			// can (claude-code), else simply the next session.
			if rw := conversation.Fresh(a); rw != nil {
				conv.HarnessSession, conv.Resume = rw.HarnessSession, rw.Resume
				binding = &journal.Binding{Agent: a.ID, HarnessSession: rw.HarnessSession}
			}
		} else {
			rw, err := conversation.RewindWith(r.ctx, tx.Store, a, a.Turn(*p.Target.ThroughTurn), r.conv)
			if err != nil && interrupt.Signalled(r.ctx) {
				return nil, r.end(r.stoppedBeforeFiles())
			}
			if err != nil {
				return nil, r.end(errcode.From(err, errcode.FailedInternal))
			}
			conv.HarnessSession, conv.Resume = rw.HarnessSession, rw.Resume
			binding = &journal.Binding{Agent: a.ID, HarnessSession: rw.HarnessSession, ForkSource: rw.ForkSource,
				ForkAt: rw.ForkAt}
		}
	}
	// Steps 4 and 5: the files, then HEAD.
	if interrupt.Signalled(r.ctx) {
		return nil, r.end(r.stoppedBeforeFiles())
	}
	ap := newApplier(r.ctx, p.Repo, tx.Store.TmpDir())
	ap.prog, ap.keep = r.prog, p.Kept
	r.prog.files()
	// The files the writes replaced are dropped meanwhile, beside the
	// capture below (treepath.Release).
	defer ap.done()
	r.filesStart = time.Now()
	err = ap.forward(p)
	testhook.Timed("rollback-files", r.filesStart)
	if err != nil {
		return nil, r.end(r.undo(ap, err))
	}
	// Between the files placed and their capture: a test writes here as
	// someone else would.
	if err := testhook.PointIn(r.ctx, "rollback-files-placed"); err != nil {
		return nil, r.end(r.undo(ap, err))
	}
	// A signal up to rollback.ended sends the rollback back
	// (docs/rollback.md#interrupts): each step below checks it first.
	if err := interrupt.Check(r.ctx); err != nil {
		return nil, r.end(r.undo(ap, err))
	}
	// Step 6: the rollback capture, never deduplicated, against the expected tree.
	expected, err := ap.expectedTree(p)
	if err != nil {
		return nil, r.end(r.undo(ap, err))
	}
	t0 = time.Now()
	// The files just written are known: the capture need not hash them
	// again.
	capture.NoteWritten(p.Repo, ap.written, ap.known(p, expected))
	testhook.Timed("real-note-written", t0)
	afterThrough := through
	if conv.Rewinds {
		afterThrough = p.Target.ThroughTurn
	}
	var after *capture.Snapshot
	var exact bool
	var taken *journal.Entry
	for try := 1; ; try++ {
		after, err = capture.Take(r.ctx, p.Repo, tx.Store.TmpDir(), limits(tx.Store))
		testhook.Timed("real-capture-after", t0)
		if err != nil {
			return nil, r.end(r.undo(ap, err))
		}
		// A path-scoped rollback answers for its paths only: the rest of the
		// tree is not its to restore, and may change meanwhile. Decided before
		// rollback.ended, after which nothing may send the rollback back.
		exact = after.Tree.String() == expected
		if !exact && !p.Paths.Empty() {
			if exact, err = plan.SameWithin(r.ctx, p.Repo, expected, after.Tree.String(), p.Paths); err != nil {
				return nil, r.end(r.undo(ap, err))
			}
		}
		if err := interrupt.Check(r.ctx); err != nil {
			return nil, r.end(r.undo(ap, err))
		}
		taken, err = checkpoints.Record(r.ctx, tx, p.Repo, a, after, checkpoints.Meta{Reason: checkpoints.Rollback,
			ThroughTurn: afterThrough, Anchors: targetCommit(p)})
		if err == nil {
			break
		}
		// A person's gc --prune=now deleted an object the capture found
		// stored, or git wrote loose, before the commit's pack held it:
		// the capture taken again stores it anew.
		if !capture.Gone(err) || try == 3 {
			return nil, r.end(r.undo(ap, err))
		}
		t0 = time.Now()
	}
	if err := testhook.PointIn(r.ctx, "rollback-before-ended"); err != nil {
		return nil, r.end(r.undo(ap, err))
	}
	if err := interrupt.Check(r.ctx); err != nil {
		return nil, r.end(r.undo(ap, err))
	}
	// Step 7: rollback.ended, with the dropped turns, then the new binding.
	ended := journal.RollbackEnd{Agent: a.ID, Checkpoint: p.Target.Checkpoint, Safety: r.safety, Restore: p.Restore,
		OK: true, After: taken.Checkpoint, Paths: p.Paths.Strings(), Copy: copyID(p), Unseen: unseenOf(p.Repo, p, after.Tree),
		Revert: revertName(p)}
	if conv.Rewinds {
		ended.Drops = conv.Drops
	}
	if _, err := tx.Append(journal.RollbackEnded, ended); err != nil {
		return nil, err
	}
	if binding != nil {
		if _, err := tx.Append(journal.AgentBinding, *binding); err != nil {
			return nil, err
		}
	}
	res := p.Result()
	res.DryRun, res.Plan, res.Guarded = false, nil, nil
	res.Safety, res.After, res.Exact = &r.safety, &taken.Checkpoint, &exact
	res.Conversation = conv
	return res, nil
}

// stoppedEarly says what is true of a rollback a signal stopped before
// its safety checkpoint, whatever step noticed (a capture, the lock, git
// killed): nothing was written. A rollback stopped later has said so
// already (undo, stoppedBeforeFiles).
func stoppedEarly(ctx context.Context, err error) error {
	if err == nil || !interrupt.Signalled(ctx) {
		return err
	}
	if e, ok := errcode.As(err); ok {
		switch e.Code {
		case errcode.FailedRollbackUndone, errcode.FailedRollbackPartial:
			return err
		}
	}
	// Not wrapped: the step that noticed has nothing to add to the signal.
	return interrupt.Coded(interrupt.Why(ctx), "the rollback stopped before its safety checkpoint; nothing was written")
}

// stoppedBeforeFiles is the rollback stopped by a signal after its safety
// checkpoint and before any file was written: the tree is S, nothing to
// undo (docs/rollback.md#interrupts).
func (r *runner) stoppedBeforeFiles() *errcode.Error {
	reason := "interrupted (" + interrupt.Why(r.ctx) + ")"
	return errcode.Newf(errcode.FailedRollbackUndone, errcode.RepoReason{Repo: ".", Reason: reason},
		"the rollback was %s before it wrote a file: the files are as the safety checkpoint %s holds them",
		reason, r.safety)
}

// end logs rollback.ended {ok: false, code} and returns the error.
func (r *runner) end(e *errcode.Error) error {
	p := r.p
	_, _ = r.tx.Append(journal.RollbackEnded, journal.RollbackEnd{Agent: p.Agent.ID, Checkpoint: p.Target.Checkpoint,
		Safety: r.safety, Restore: p.Restore, OK: false, Code: string(e.Code), Paths: p.Paths.Strings(), Copy: copyID(p),
		Revert: revertName(p)})
	return e
}

// copyID is the fetched copy a plan restores from, "" for the agent's own.
func copyID(p *plan.Plan) string {
	if p.Copy == nil {
		return ""
	}
	return p.Copy.ID
}

// revertName is what a revert's plan takes back, "" for a rollback.
func revertName(p *plan.Plan) string {
	if p.Revert == nil {
		return ""
	}
	return p.Revert.Name
}

// targetCommit is the commit of the plan's target, which its ref reaches
// (checkpoints.Meta.Anchors): the files the rollback restores are its.
func targetCommit(p *plan.Plan) []*git.Oid {
	if len(p.Target.Repos) != 1 {
		return nil
	}
	id, err := git.NewOid(p.Target.Repos[0].Commit)
	if err != nil {
		return nil
	}
	return []*git.Oid{id}
}
