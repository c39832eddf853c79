package rollback

import (
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
)

// validateRevert checks a revert's parameters alone (docs/rollback.md#revert):
// a turn t<n> or a pair of checkpoints, files only, no checkpoint, no
// --undo, no --outside (a revert keeps every later change, whoever made
// it), and --conflicts refuse or markers.
func validateRevert(req *Request) error {
	usage := func(format string, args ...any) *errcode.Error {
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"revert": req.Revert}, format, args...)
	}
	if req.Revert == "" {
		if req.Conflicts != "" {
			return usage("--conflicts goes with --revert").Retry("to roll back without it", "--conflicts=")
		}
		return nil
	}
	switch {
	case req.Undo:
		return usage("--undo undoes the last rollback or revert; give it alone").
			Retry("to undo the last rollback or revert", "--revert=", "--conflicts=").
			Retry("to take back "+req.Revert, "--undo=false")
	case req.Checkpoint != "":
		return usage("--revert names what to take back; name no checkpoint with it").
			Retry("to take back "+req.Revert, "--checkpoint=").
			Retry("to go back to "+req.Checkpoint, "--revert=", "--conflicts=")
	case req.Restore == "all":
		return usage("a revert restores files only; leave out --restore=all").
			Hint("the conversation keeps the reverted turn; the agent's note tells it the turn was reverted").
			Retry("to take back "+req.Revert, "--restore=")
	case req.Outside != "":
		return usage("a revert keeps every later change, the agent's or a person's; --outside does not apply").
			Hint("where a later change meets the turn's, --conflicts says what to do").
			Retry("to take back "+req.Revert, "--outside=")
	case req.KeepHead:
		return usage("a revert never moves HEAD; leave out --keep-head").
			Retry("to take back "+req.Revert, "--keep-head=false")
	case req.Copy():
		return usage("a revert takes back a local agent's turn; a fetched copy's files come back with a rollback")
	}
	switch req.Conflicts {
	case "":
		req.Conflicts = "refuse"
	case "refuse", "markers":
	default:
		return usage("--conflicts is refuse or markers")
	}
	from, to, pair := strings.Cut(req.Revert, "..")
	for _, name := range []string{from, to} {
		if !pair && name == "" {
			continue
		}
		n, err := ids.ParseName(name)
		switch {
		case err != nil && name == "":
			return checkpoints.BadName(name, err)
		case err != nil:
			continue // a label, which the agent decides (resolveRevert)
		case n.Kind == ids.ToolOf:
			return usage("%s is a point inside a turn; a revert takes back a turn or the changes between two checkpoints",
				quote.C(name)).Hint("--revert=t<n>, or --revert=k<a>..k<b>")
		case !pair && n.Kind != ids.TurnOf:
			// One checkpoint: refused once the agent is read, as the
			// pair its hint names depends on the agent (resolveRevert).
		}
	}
	// Files only, and HEAD, the branch and the index stay.
	req.Restore, req.KeepHead = "files", true
	return nil
}

// notATurn refuses --revert=<name> of one checkpoint, which takes back
// nothing by itself. When the agent a has it live, id is the checkpoint name
// is, and the hint names a pair from it: what changed since it, or, for
// the agent's latest, since which nothing changed, what it changed (none
// for the first). A hint printed before the agent is read named pairs
// that did not run: last~1..last of an agent's only checkpoint, or
// k<n>..last of its latest, which names it twice.
func notATurn(name string, a *agents.Agent, id string) *errcode.Error {
	e := errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"revert": name},
		"--revert=%s: name a turn, t<n>, or a pair of checkpoints, k<a>..k<b>", quote.C(name)).
		Shorter("--revert=%s: name a turn or a pair of checkpoints", quote.C(name))
	if a == nil || a.Checkpoint(id) == nil || !a.Checkpoint(id).Live() {
		return e
	}
	if name != id {
		e = errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"revert": name},
			"--revert=%s names one checkpoint, %s/%s: name a turn, t<n>, or a pair of checkpoints", quote.C(name), a.ID, id).
			Shorter("--revert names one checkpoint, %s/%s", a.ID, id)
	}
	if latest := a.Latest(); latest == nil || latest.Checkpoint != id {
		return e.Retry("to take back what changed since "+a.ID+"/"+id, "--revert="+id+"..last")
	}
	return whatItChanged(e, a, id)
}

// whatItChanged adds to e the hint that takes back what checkpoint id
// changed: the pair from the live checkpoint before it. The agent's first
// has none, and gets no hint.
func whatItChanged(e *errcode.Error, a *agents.Agent, id string) *errcode.Error {
	prev := ""
	for _, c := range a.Checkpoints {
		if c.Checkpoint == id {
			break
		}
		if c.Live() {
			prev = c.Checkpoint
		}
	}
	if prev == "" {
		return e
	}
	return e.Retry("to take back what "+a.ID+"/"+id+" changed", "--revert="+prev+".."+id)
}

// resolveRevert finds what a revert takes back: for t<n>, that turn's
// start and end checkpoints; for a pair, its two checkpoints. The end is
// the plan's target, and req.Checkpoint names it.
func resolveRevert(s *state.Store, a *agents.Agent, req *Request) (*plan.Revert, *agents.Checkpoint, error) {
	from, to, pair := strings.Cut(req.Revert, "..")
	rv := &plan.Revert{Name: req.Revert, Conflicts: req.Conflicts}
	var fromID, toID string
	var err error
	if pair {
		if fromID, err = checkpoints.Resolve(a, from); err != nil {
			return nil, nil, err
		}
		if toID, err = checkpoints.Resolve(a, to); err != nil {
			return nil, nil, err
		}
	} else {
		n, perr := ids.ParseName(req.Revert)
		one := perr != nil || n.Kind != ids.TurnOf
		if toID, err = checkpoints.Resolve(a, req.Revert); err != nil {
			if one && perr == nil {
				return nil, nil, notATurn(req.Revert, nil, "")
			}
			return nil, nil, err
		}
		if one {
			return nil, nil, notATurn(req.Revert, a, toID)
		}
		rv.Turn = req.Revert
		t := a.Turn(req.Revert)
		start := turnStart(a, t)
		if start == nil {
			return nil, nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": req.Revert},
				"turn %s of agent %s has no checkpoint from before it", req.Revert, a.ID).
				Hint("git venom-checkpoint list --turn=%s shows its checkpoints; --revert=k<a>..k<b> names a pair", req.Revert)
		}
		fromID = start.Checkpoint
	}
	start, err := checkpoints.Find(s.Repo, a, fromID)
	if err != nil {
		return nil, nil, err
	}
	end, err := checkpoints.Find(s.Repo, a, toID)
	if err != nil {
		return nil, nil, err
	}
	// A turn's pair is in order whatever its checkpoints' numbers (a
	// turn that changed nothing ends on the checkpoint it started on);
	// a pair given backwards is refused, as it would put the turn back.
	if pair && start.Seq > end.Seq {
		return nil, nil, errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"revert": req.Revert},
			"--revert=%s: %s is not before %s; the pair is the older checkpoint, then the newer", quote.C(req.Revert),
			start.Checkpoint, end.Checkpoint).Retry("the older one first", "--revert="+end.Checkpoint+".."+start.Checkpoint)
	}
	if pair && start.Checkpoint == end.Checkpoint {
		// As git revert A..A, an empty set: nothing to take back.
		return nil, nil, whatItChanged(errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"revert": req.Revert},
			"--revert=%s names %s/%s twice: nothing changed between", quote.C(req.Revert), a.ID, end.Checkpoint).
			Shorter("--revert names %s/%s twice", a.ID, end.Checkpoint), a, end.Checkpoint)
	}
	if pair {
		rv.Name = start.Checkpoint + ".." + end.Checkpoint
	}
	rv.From = start
	req.Checkpoint = end.Checkpoint
	return rv, end, nil
}

// turnStart is the checkpoint a turn started from: its turn_start's, or
// for a turn a harness started with no turn_start (docs/checkpoints.md#reasons) the
// agent's last checkpoint logged before the turn's end.
func turnStart(a *agents.Agent, t *agents.Turn) *agents.Checkpoint {
	if t == nil {
		return nil
	}
	if t.StartCheckpoint != "" {
		return a.Checkpoint(t.StartCheckpoint)
	}
	var prev *agents.Checkpoint
	for _, c := range a.Checkpoints {
		if c.Seq >= t.EndSeq || c.Checkpoint == t.EndCheckpoint {
			break
		}
		if c.Live() {
			prev = c
		}
	}
	return prev
}
