// Package rollback runs git venom-rollback (docs/rollback.md): preflight, the dry run,
// and the real call with its safety checkpoint, file recipe, HEAD move,
// rollback capture and failure handling.
package rollback

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/state"
)

// Request is one call of git venom-rollback.
type Request struct {
	Agent string // as given (--agent or VENOM_AGENT), "" to resolve
	// Into is the local agent that records a rollback of a fetched copy
	// (Agent a copy id, share.IsCopy): "" to resolve as Agent would be.
	Into string
	plan.Options
	// Undo goes back to the safety checkpoint of the agent's last
	// rollback (docs/rollback.md#undo), in place of Checkpoint.
	Undo   bool
	DryRun bool
	Plan   string
	Caller Caller
	// HookFiles are the files of the tree at top where `hook install`
	// writes git-venom's hooks, by path (harness.HookFiles): a rollback
	// leaves ours alone (docs/rollback.md#hook-settings). It is required,
	// as DetectCaller's isShell, so that no caller can leave a harness out.
	HookFiles func(top string) map[string]plan.HookFile
	// Materialize writes a claude-code rewind's forked session at once
	// (conversation.Options); it is not part of the plan.
	Materialize bool
	// Progress counts a real call's files for a progress line (nil: none).
	Progress *Progress
	// Cwd is the caller's current folder, relative to the top ("" at the
	// top or outside the tree): a rollback keeps it (docs/rollback.md#the-current-folder).
	Cwd string
}

// checked is what preflight found.
type checked struct {
	agent   *agents.Agent
	target  *agents.Checkpoint
	tree    *repo.Repo
	guarded bool
	head    plan.Head
	// copy is set when target is a fetched copy's checkpoint; since is
	// then where the window walk starts (plan.Input.Since).
	copy  *plan.Copy
	since int64
	// revert is set for a revert; target is then its end.
	revert *plan.Revert
}

// Copy reports whether the request restores a fetched copy's checkpoint.
func (r *Request) Copy() bool { return share.IsCopy(r.Agent) }

// Local is the local agent the request names, "" to resolve: Into for a
// fetched copy, else Agent.
func (r *Request) Local() string {
	if r.Copy() {
		return r.Into
	}
	return r.Agent
}

// since is where the plan's window walk starts: the target's first capture,
// or the local agent's registration for a fetched copy's target.
func (c *checked) sinceSeq() int64 {
	if c.copy != nil {
		return c.since
	}
	return c.target.Seq
}

func (c *checked) free(s *state.Store) {
	if c != nil && c.tree != nil && c.tree != s.Repo {
		c.tree.Free()
	}
}

// NoTarget is invalid_params.checkpoint when req names nothing to roll
// back to. It comes first, before the choice of --dry-run or --plan, at a
// terminal or not: without a checkpoint there is nothing to dry-run
// either, and git venom-diff names this mistake the same way.
func NoTarget(req *Request) error {
	if req.Revert != "" || req.Undo || req.Checkpoint != "" {
		return nil
	}
	return errcode.Newf(errcode.InvalidParamsCheckpoint, nil, "which checkpoint? git venom-rollback <checkpoint>, or --undo").
		Shorter("which checkpoint? name one, or --undo").
		Hint("%s", ids.FormsHint).
		Hint("git venom-checkpoint list shows them")
}

// dryRunCommand is the dry run of what req asks for, as a person types it.
func dryRunCommand(req *Request) string {
	switch {
	case req.Revert != "":
		return quote.Shell([]string{"git", "venom-rollback", "--revert=" + req.Revert, "--dry-run"})
	case req.Undo:
		return "git venom-rollback --undo --dry-run"
	}
	return quote.Shell([]string{"git", "venom-rollback", req.Checkpoint, "--dry-run"})
}

// Validate checks the parameters alone (docs/rollback.md#preflight: invalid_params first).
func Validate(req *Request) error {
	if req.HookFiles == nil {
		return errors.New("rollback: the request names no hook files (Request.HookFiles)")
	}
	if err := NoTarget(req); err != nil {
		return err
	}
	if req.DryRun == (req.Plan != "") {
		return errcode.Newf(errcode.InvalidParamsPlan, nil, "give exactly one of --dry-run and --plan").
			Hint("run with --dry-run first, then quote its plan with --plan=<id>")
	}
	if req.Plan != "" && !plan.WellFormedID(req.Plan) {
		return errcode.Newf(errcode.InvalidParamsPlan, nil, "--plan=%s is no plan id: a plan id is p1- and 16 hex digits",
			quote.C(req.Plan)).Hint("the dry run prints it: %s", dryRunCommand(req))
	}
	if err := validateRevert(req); err != nil {
		return err
	}
	switch {
	case req.Revert != "":
	case req.Undo && req.Checkpoint != "":
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"checkpoint": req.Checkpoint},
			"--undo goes back to the last rollback's safety checkpoint; name no checkpoint with it").
			Hint("git venom-rollback --undo --dry-run shows where it goes")
	case req.Undo:
	default:
		// A name of no other form is a label, which the agent decides.
		if n, err := ids.ParseName(req.Checkpoint); err == nil && n.Kind == ids.ToolOf {
			// Just before a tool call, mid-turn: no point of the
			// conversation matches those files (docs/rollback.md#tool-calls).
			if req.Restore == "all" {
				return errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"checkpoint": req.Checkpoint},
					"a rollback to just before a tool call restores files only; leave out --restore=all").
					Hint("the conversation has no point between two tool calls; t<n> names a turn's end").
					Retry("to restore the files", "--restore=")
			}
			req.Restore = "files"
		}
	}
	if req.Into != "" && !req.Copy() {
		return errcode.Newf(errcode.InvalidParamsInto, map[string]string{"into": req.Into},
			"--into names the local agent that records a rollback of a fetched copy; --agent names no copy here").
			Hint("git venom-rollback --agent=<remote>/<machine>/<agent> <checkpoint> --into=%s", req.Into)
	}
	if req.Copy() {
		// A fetched copy's files come here; nothing else of it does
		// (docs/rollback.md#fetched-copies): its conversation, HEAD and branch are another
		// machine's.
		if share.IsCopy(req.Into) {
			return errcode.Newf(errcode.InvalidParamsInto, map[string]string{"into": req.Into},
				"--into=%s names a fetched copy; it names a local agent, which records the rollback", req.Into).
				Hint("git venom-checkpoint agents lists the local agents")
		}
		if req.Undo {
			return errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"checkpoint": req.Agent},
				"--undo undoes a local agent's last rollback, also one of a fetched copy; name the local agent").
				Hint("git venom-rollback --undo --agent=<local agent> --dry-run")
		}
		if req.Restore == "all" {
			return errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"checkpoint": req.Agent},
				"a rollback of a fetched copy restores files only; leave out --restore=all").
				Hint("the copy's conversation, HEAD and branch are another machine's").
				Retry("to restore its files", "--restore=")
		}
		req.Restore, req.KeepHead = "files", true
	}
	if !req.Paths.Empty() {
		// A path-scoped rollback restores those files and nothing else
		// (docs/rollback.md#some-paths): never the conversation, which cannot go back
		// for some files only, and never HEAD, the branch or the index,
		// which hold every path.
		if req.Restore == "all" {
			return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"paths": req.Paths.Shown()},
				"a rollback of some paths restores files only; leave out --restore=all").
				Hint("without paths, --restore=all brings the conversation back too").
				Retry("to restore those paths", "--restore=")
		}
		req.Restore, req.KeepHead = "files", true
	}
	if req.Restore == "" {
		req.Restore = "all"
	}
	switch req.Restore {
	case "all", "files":
	default:
		return errcode.Newf(errcode.InvalidParamsUsage, nil, "--restore is all or files")
	}
	switch req.Outside {
	case "", "refuse", "keep", "overwrite":
	default:
		return errcode.Newf(errcode.InvalidParamsUsage, nil, "--outside is refuse, keep or overwrite")
	}
	return nil
}

// unshaped is BadName of the first checkpoint req names that has no
// name's form (a label's, when there is an agent), the refusal of a
// revert of one checkpoint, or nil.
func unshaped(req *Request) error {
	names := []string{req.Checkpoint}
	if req.Revert != "" {
		from, to, _ := strings.Cut(req.Revert, "..")
		names = []string{from, to}
	}
	for _, name := range names {
		if _, err := ids.ParseName(name); err != nil && name != "" {
			return checkpoints.BadName(name, err)
		}
	}
	if n, err := ids.ParseName(req.Revert); err == nil && n.Kind != ids.TurnOf {
		return notATurn(req.Revert, nil, "")
	}
	return nil
}

// preflight runs docs/rollback.md#preflight's checks in docs/rollback.md#preflight's order, up to HEAD;
// outside edits come with the plan, after the capture. held says the caller
// holds the lock (a rollback left open is then settled already); quick
// stops after the checks that need no git, for a real call's first look
// before it waits for the lock.
func preflight(ctx context.Context, s *state.Store, st *agents.State, req *Request, held, quick bool) (*checked, error) {
	if req.Copy() {
		return preflightCopy(ctx, s, st, req, held, quick)
	}
	a, err := st.Named(req.Agent)
	if err != nil {
		if e := unshaped(req); e != nil && errcode.Is(err, errcode.NotFoundAgent) {
			return nil, e // no agent, so no label: invalid_params first
		}
		return nil, err
	}
	if req.Revert != "" {
		rv, target, err := resolveRevert(s, a, req)
		if err != nil {
			return nil, err
		}
		c, err := preflightAgent(ctx, s, st, req, held, quick, a, target)
		if err != nil {
			return nil, err
		}
		c.revert = rv
		return c, nil
	}
	// The plan and its id name the checkpoint as k<n>, whatever name the
	// caller gave (docs/rollback.md#undo, docs/checkpoints.md#names).
	if req.Undo {
		req.Checkpoint, err = checkpoints.UndoTarget(a)
	} else {
		req.Checkpoint, err = checkpoints.Resolve(a, req.Checkpoint)
	}
	if err != nil {
		return nil, err
	}
	target, err := checkpoints.Find(s.Repo, a, req.Checkpoint)
	if err != nil {
		return nil, err
	}
	return preflightAgent(ctx, s, st, req, held, quick, a, target)
}

// preflightCopy is preflight for a fetched copy's checkpoint
// (docs/rollback.md#fetched-copies): the copy's log is read and checked again, the
// checkpoint's ref, trailers and tree are checked again now (a later fetch or
// a hand-made update-ref may have changed them since the fetch), and every
// other check is the local agent's, which records the rollback.
func preflightCopy(ctx context.Context, s *state.Store, st *agents.State, req *Request, held, quick bool) (*checked, error) {
	cst, ca, err := share.ReadCopy(ctx, s, req.Agent)
	if err != nil {
		return nil, err
	}
	if req.Checkpoint, err = checkpoints.Resolve(ca, req.Checkpoint); err != nil {
		return nil, err
	}
	target, err := checkpoints.Find(s.Repo, ca, req.Checkpoint)
	if err != nil {
		return nil, err
	}
	// The quick look before the lock reads the commit only; the whole
	// tree is walked once the lock is held, and in a dry run.
	level := share.CheckPaths
	if quick {
		level = share.CheckRef
	}
	if err := share.Check(s, ca, target, level); err != nil {
		return nil, err
	}
	a, err := intoAgent(st, req.Into)
	if err != nil {
		return nil, err
	}
	c, err := preflightAgent(ctx, s, st, req, held, quick, a, target)
	if err != nil {
		return nil, err
	}
	c.copy = &plan.Copy{ID: ca.ID, Commit: target.Repos[0].Commit}
	c.copy.History, c.copy.Edits = copyHistory(s, cst, ca, target)
	c.since = a.RegisteredAt
	return c, nil
}

// copyHistory is the copy's windows from its checkpoint target on, and
// its turns' edit records, for the plan to class what the copy's own
// turns made (plan.Copy.History). Every capture a window names must still
// be the commit the copy's ref holds (share.Check): a log is as writable
// as its refs. Anything it cannot vouch for gives none, and the whole
// stretch is a gap.
func copyHistory(s *state.Store, cst *agents.State, ca *agents.Agent, target *agents.Checkpoint) ([]agents.Window, map[string][]string) {
	windows := cst.Windows(ca, target.Seq)
	edits := map[string][]string{}
	checked := map[string]bool{} // a window's end is the next one's start
	for _, w := range windows {
		for _, c := range []agents.Capture{w.From, w.To} {
			if checked[c.Checkpoint] {
				continue
			}
			checked[c.Checkpoint] = true
			k := ca.Checkpoint(c.Checkpoint)
			if k == nil || len(k.Repos) != 1 || k.Repos[0].Commit != c.Commit || share.Check(s, ca, k, share.CheckRef) != nil {
				return nil, nil
			}
		}
		if w.Kind == agents.TurnWindow {
			if t := ca.Turn(w.Turn); t != nil {
				edits[w.Turn] = t.Edits
			}
		}
	}
	return windows, edits
}

// intoAgent is the local agent that records a copy's rollback: --into,
// VENOM_AGENT, or the one agent a local rollback would infer. None is
// ever made up: without one, the error says what to type.
func intoAgent(st *agents.State, into string) (*agents.Agent, error) {
	if into != "" {
		return st.Named(into)
	}
	id, err := st.Resolve("")
	if err != nil {
		data := map[string]any{"agents": []string{}}
		if e, ok := errcode.As(err); ok {
			if m, ok := e.Data.(map[string]any); ok && m["agents"] != nil {
				data["agents"] = m["agents"]
			}
		}
		return nil, errcode.Newf(errcode.InvalidParamsInto, data,
			"a rollback of a fetched copy is recorded under a local agent (its safety checkpoint, its log records), and none can be inferred: name it with --into").
			Hint("--into=<agent> names a local agent; git venom-checkpoint agents lists them").
			Hint("with none yet, git venom-checkpoint --agent=<id> registers one with its first checkpoint")
	}
	return st.Known(id)
}

// preflightAgent is the checks of the agent a, which the rollback
// records, with its target found.
func preflightAgent(ctx context.Context, s *state.Store, st *agents.State, req *Request, held, quick bool,
	a *agents.Agent, target *agents.Checkpoint) (*checked, error) {
	guarded := st.Guarded(a)
	if !req.DryRun && req.Caller.Agent {
		if err := grant(st, a, guarded, req.Caller); err != nil {
			return nil, err
		}
	}
	switch a.State {
	case agents.Archived:
		return nil, errcode.Newf(errcode.ConflictInvalidTransition, map[string]string{"agent": a.ID},
			"agent %s is archived; its checkpoints are still readable with git", a.ID)
	case agents.HandedOver:
		return nil, errcode.Newf(errcode.ConflictHandedOver, map[string]string{"agent": a.ID},
			"agent %s is handed over to its harness; take it back first", a.ID)
	case agents.Running:
		// A turn whose harness process has exited runs no more: the real
		// call ends it first (checkpoints.EndExited).
		if a.ExitedTurn() == nil {
			return nil, errcode.Newf(errcode.ConflictTurnRunning, map[string]string{"agent": a.ID},
				"a turn of %s is running; stop it first (its turn_end checkpoint is then a target)", a.ID).
				Hint("if nothing runs it any more, end it: git venom-checkpoint --agent=%s --reason=turn_end", a.ID)
		}
	}
	if !held {
		for _, o := range append([]*agents.Agent{a}, st.Sharers(a)...) {
			if o.OpenRollback != nil && !lock.IsFree(s.Repo.Lock) {
				return nil, errcode.Newf(errcode.ConflictRollbackRunning, map[string]string{"agent": o.ID},
					"a rollback of %s is running on this tree", o.ID)
			}
		}
	}
	if checkpoints.Pending(s, a.ID) {
		return nil, errcode.Newf(errcode.ConflictCheckpointPending, map[string]string{"agent": a.ID},
			"a capture of %s has not finished; retry", a.ID)
	}
	var live []string
	for _, c := range st.Descendants(a) {
		if c.Live() {
			live = append(live, c.ID)
		}
	}
	if len(live) > 0 {
		return nil, errcode.Newf(errcode.ConflictLiveChildren, map[string]any{"children": live},
			"a descendant of %s is live", a.ID)
	}
	live = nil
	for _, o := range st.Sharers(a) {
		if o.Live() {
			live = append(live, o.ID)
		}
	}
	if len(live) > 0 {
		return nil, errcode.Newf(errcode.ConflictTreeShared, map[string]any{"agents": live},
			"an agent sharing the tree of %s is live", a.ID)
	}
	if quick {
		return &checked{agent: a, target: target, guarded: guarded}, nil
	}
	stale := func(err error) error {
		e := errcode.From(err, errcode.FailedInternal)
		if e.Code == errcode.ConflictTreeStale && !req.Copy() {
			e.Hint("its checkpoint stays readable with git: git show --stat %s", ids.RefName(a.ID, target.N))
		}
		return e
	}
	tree, err := checkpoints.TreeOf(ctx, s, a)
	if err != nil {
		return nil, stale(err)
	}
	c := &checked{agent: a, target: target, tree: tree, guarded: guarded}
	if err := checkpoints.StillItsTree(a, tree); err != nil {
		c.free(s)
		return nil, stale(err)
	}
	head, branch, offBranch, err := capture.ReadHead(tree)
	if err != nil {
		c.free(s)
		return nil, errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "head"},
			"cannot read HEAD").Wrap(err)
	}
	cur := plan.HeadState{Branch: branch, OffBranch: offBranch}
	if head != nil {
		h := head.String()
		cur.Commit = &h
	}
	if err := gitOperation(tree, plan.WouldMove(guarded, req.KeepHead, cur, target.Repos[0])); err != nil {
		c.free(s)
		return nil, err
	}
	if req.Restore == "all" {
		if err := conversationCheck(a, target); err != nil {
			c.free(s)
			return nil, err
		}
	}
	c.head, err = plan.PlanHead(ctx, tree, guarded, req.KeepHead, req.Undo, cur, target.Repos[0])
	if err != nil {
		c.free(s)
		if e, ok := errcode.As(err); ok && req.Undo && e.Code == errcode.ConflictHeadMoved && !e.HasRetry() {
			e.Retry("to restore the files and leave HEAD as it is", "--keep-head")
		}
		if _, ok := errcode.As(err); !ok {
			err = errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "head"},
				"cannot compare HEAD with the checkpoint's").Wrap(err)
		}
		return nil, err
	}
	return c, nil
}

// grant applies docs/rollback.md#grants to an agent caller's real call: never a guarded
// tree, and only its own descendants.
func grant(st *agents.State, a *agents.Agent, guarded bool, who Caller) error {
	if guarded {
		return errcode.Newf(errcode.DeniedAgentCaller, map[string]string{"agent": a.ID},
			"an agent may not roll back a guarded tree; a person must run the real call").
			Hint("a dry run is allowed; show its plan to a person")
	}
	if who.ID != "" {
		if self := st.Agent(who.ID); self != nil {
			for _, d := range st.Descendants(self) {
				if d.ID == a.ID {
					return nil
				}
			}
		}
	}
	return errcode.Newf(errcode.DeniedAgentCaller, map[string]string{"agent": a.ID},
		"an agent may roll back only its own descendants' trees")
}

// gitOperation finds a merge, rebase, cherry-pick, revert or bisect under
// way, and a locked index when HEAD is to move (docs/rollback.md#preflight).
func gitOperation(r *repo.Repo, headMoves bool) error {
	for _, f := range []struct{ file, op string }{
		{"MERGE_HEAD", "merge"}, {"rebase-merge", "rebase"}, {"rebase-apply", "rebase"},
		{"CHERRY_PICK_HEAD", "cherry_pick"}, {"REVERT_HEAD", "revert"}, {"BISECT_LOG", "bisect"},
	} {
		if _, err := os.Lstat(filepath.Join(r.GitDir, f.file)); err == nil {
			return errcode.Newf(errcode.ConflictGitOperation, map[string]string{"repo": ".", "operation": f.op},
				"a %s is under way; finish or abort it first", f.op)
		}
	}
	if headMoves {
		if _, err := os.Lstat(r.Index + ".lock"); err == nil {
			// git's own advice: the lock of a git command killed or crashed
			// stays, and nothing but a person removes it.
			return errcode.Newf(errcode.ConflictGitOperation, map[string]string{"repo": ".", "operation": "index_locked"},
				"the index is locked (%s.lock): another git command is running, or one was killed and left the lock", r.Index).
				Shorter("the index is locked").
				Hint("another git command is running, or one was killed and left the lock;").
				Hint("if none is running in this repository, remove the lock to continue:").
				Hint("  %s", quote.Shell([]string{"rm", "-f", r.Index + ".lock"}))
		}
	}
	return nil
}

// conversationCheck is docs/rollback.md#conversation for restore=all. An agent with no
// harness has no conversation: nothing is ever to rewind, so restore=all
// restores the files, as restore=files does, without a note.
func conversationCheck(a *agents.Agent, c *agents.Checkpoint) error {
	if !a.HasConversation() {
		return nil
	}
	last := a.LastEndedTurn()
	noRewind := c.ThroughTurn == nil || (last != nil && last.ID == *c.ThroughTurn)
	filesOnly := func(why string) error {
		return errcode.Newf(errcode.ConflictCheckpointFilesOnly, map[string]string{"why": why},
			"checkpoint %s cannot bring the conversation back: %s; use --restore=files", c.Checkpoint,
			checkpoints.WhyWords(c, why)).
			Shorter("%s cannot bring the conversation back", c.Checkpoint).
			Hint("%s", checkpoints.WhyWords(c, why)).
			Retry("to restore the files and tell the agent with the rollback note", "--restore=files")
	}
	if noRewind {
		switch {
		case c.ThroughTurn == nil && c.MidTurn:
			return filesOnly(checkpoints.WhyMidTurn)
		case c.ThroughTurn == nil && c.Overlap:
			return filesOnly(checkpoints.WhyOverlap)
		}
		return nil
	}
	if !conversation.CanRewind(a, a.Turn(*c.ThroughTurn)) {
		// What cannot be rewound: the harness, or this turn (and why),
		// not "the harness cannot" of one that rewinds other turns.
		turn := a.Turn(*c.ThroughTurn)
		e := errcode.Newf(errcode.UnsupportedHarnessCapability, map[string]string{"fix": "--restore=files"},
			"%s; use --restore=files", conversation.WhyNoRewind(a, *c.ThroughTurn, turn))
		if conversation.For(a) != nil {
			e.Shorter("the conversation cannot go back to %s", *c.ThroughTurn)
			if why := conversation.WhyNot(a, turn); why != "" {
				e.Hint("%s", why)
			}
		}
		return e.Retry("to restore the files and tell the agent with the rollback note", "--restore=files")
	}
	if err := conversation.Ready(a); err != nil {
		return errcode.Newf(errcode.UnsupportedHarnessCapability,
			map[string]string{"fix": "--restore=files", "harness": a.Harness, "reason": err.Error()},
			"%v, so the %s conversation cannot be rewound; install it, or use --restore=files", err, a.Harness).
			Retry("to restore the files and tell the agent with the rollback note", "--restore=files")
	}
	if why := checkpoints.NoConversation(a, c); why != "" {
		return filesOnly(why)
	}
	return nil
}
