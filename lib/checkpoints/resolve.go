package checkpoints

import (
	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"strings"
)

// Resolve turns a checkpoint as a person names it (docs/checkpoints.md#names: k<n>,
// last, last~<n>, t<n>) into the agent's k<n>, the one resolver every command
// uses. k<n> comes back as given (Find says whether it still counts); last
// and last~<n> count the agent's live checkpoints from the newest; t<n> is the
// checkpoint that turn's turn_end took or reused. A malformed name is
// invalid_params.checkpoint; one that names nothing, not_found.checkpoint.
func Resolve(a *agents.Agent, name string) (string, error) {
	n, err := ids.ParseName(name)
	if err != nil {
		return "", BadName(name, err)
	}
	notFound := func(format string, args ...any) error {
		return errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": name}, format, args...).
			Hint("git venom-checkpoint list shows the checkpoints")
	}
	switch n.Kind {
	case ids.Last, ids.Back:
		var live []*agents.Checkpoint // newest first, as far as needed
		for i := len(a.Checkpoints) - 1; i >= 0 && len(live) <= n.N; i-- {
			if a.Checkpoints[i].Live() {
				live = append(live, a.Checkpoints[i])
			}
		}
		switch {
		case len(live) == 0:
			return "", notFound("agent %s has no checkpoint", a.ID)
		case n.N >= len(live):
			return "", notFound("agent %s has %d checkpoint(s) before its last; %s goes back %d", a.ID, len(live)-1, name, n.N)
		}
		return live[n.N].Checkpoint, nil
	case ids.TurnOf:
		t := a.Turn(ids.Turn(n.N))
		switch {
		case t == nil && a.ForgotTurn(ids.Turn(n.N)):
			// A turn a fold snapshot left out: its turn_end checkpoint
			// is kept apart.
			if k := a.ForgottenTurnEnd(ids.Turn(n.N)); k != "" {
				return k, nil
			}
			return "", notFound("turn %s of agent %s has no turn_end checkpoint", name, a.ID)
		case t == nil:
			return "", notFound("agent %s has no turn %s", a.ID, name)
		case t.EndCheckpoint == "":
			return "", notFound("turn %s of agent %s has no turn_end checkpoint", name, a.ID)
		}
		return t.EndCheckpoint, nil
	}
	// k<n> as given, and t<n>.<i>: Find says whether it counts.
	return name, nil
}

// BadName is the error for a name ids.ParseName refused: what the person
// most likely meant where that can be told (ids.Suggest), and where to
// see the checkpoints.
func BadName(name string, err error) *errcode.Error {
	e := errcode.Newf(errcode.InvalidParamsCheckpoint, map[string]string{"checkpoint": name}, "%v", err)
	if strings.Contains(err.Error(), ids.NameForms) {
		// The forms on a line of their own: within 80 columns.
		e.Shorter("%s", strings.TrimSuffix(strings.TrimSuffix(err.Error(), ids.NameForms), ": give ")).Hint(ids.FormsHint)
	}
	if s := ids.Suggest(name); s != "" {
		e.Hint("%s", s)
	}
	return e.Hint("git venom-checkpoint list shows the checkpoints")
}

// UndoTarget is the checkpoint --undo goes back to: the safety checkpoint
// of the agent's last rollback, one that ended well or one that may have
// written part of its files (docs/rollback.md#undo). A rollback whose
// process died and that no command has settled yet is that one too: the
// real call settles it first (state.Begin).
func UndoTarget(a *agents.Agent) (string, error) {
	if o := a.OpenRollback; o != nil {
		return o.Safety, nil
	}
	if a.LastRollback == nil {
		return "", errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"agent": a.ID},
			"agent %s has no rollback to undo", a.ID).
			Hint("--undo goes back to the safety checkpoint of the agent's last rollback")
	}
	return a.LastRollback.Safety, nil
}
