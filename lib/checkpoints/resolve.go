package checkpoints

import (
	"fmt"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/suggest"
	"github.com/git-venom/git-venom/lib/ui"
)

// Resolve turns a checkpoint as a person names it (docs/checkpoints.md#names)
// into the agent's k<n>, for every command: k<n> as given (Find says whether
// it still counts); last and last~<n> count live checkpoints from the newest;
// t<n> is the one that turn's turn_end took or reused; any other name is a
// label, the newest live checkpoint given it (docs/checkpoints.md#labels).
// A name that is neither is invalid_params.checkpoint; one that names
// nothing, not_found.checkpoint.
func Resolve(a *agents.Agent, name string) (string, error) {
	n, err := ids.ParseName(name)
	if err != nil {
		return byLabel(a, name, err)
	}
	notFound := func(format string, args ...any) error {
		e := errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": name}, format, args...)
		return LabelHint(e, a, name).Hint("git venom-checkpoint list shows the checkpoints")
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

// byLabel resolves a name of no other form as a label: the newest live
// checkpoint the agent gave it. A label only pruned or removed checkpoints
// had says so; a name that is no label at all is BadName, with the labels
// it is close to.
func byLabel(a *agents.Agent, name string, err error) (string, error) {
	had := a.Labeled(name)
	for _, c := range had {
		if c.Live() {
			return c.Checkpoint, nil
		}
	}
	// The newest checkpoint that had it: one the fold holds, or one a
	// fold snapshot left out (pruned long ago).
	was := a.ForgotLabel(name)
	if len(had) > 0 && had[0].N > was {
		was = had[0].N
	}
	if was > 0 {
		id := ids.Checkpoint(was)
		return "", errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": name},
			"label %s was on %s/%s, which was pruned or removed", quote.Always(name), a.ID, id).
			Shorter("label %s was on %s/%s, which was pruned or removed", cutLabel(name, 24), a.ID, id).
			Hint("git venom-checkpoint list shows the checkpoints")
	}
	e := errcode.Newf(errcode.InvalidParamsCheckpoint, map[string]string{"checkpoint": name}, "%v", err)
	near := closeLabels(a, name)
	for _, c := range near {
		room := ui.Columns80 - ui.Width(fmt.Sprintf("hint: did you mean , the label of %s/%s?", a.ID, c.id))
		e.Hint("did you mean %s, the label of %s/%s?", cutLabel(c.label, room), a.ID, c.id)
	}
	return "", badName(e, name, err, len(near) > 0)
}

// LabelHint adds to e, an error saying that name names no checkpoint
// although it has a checkpoint's shape (k9, t9), the checkpoint name is
// a label of: a label is read as one only when it has no other form, so
// the hint gives the id to type.
func LabelHint(e *errcode.Error, a *agents.Agent, name string) *errcode.Error {
	for _, c := range a.Labeled(name) {
		if c.Live() {
			return e.Hint("%s is also a label, of %s/%s: name it %s", quote.Always(name), a.ID, c.Checkpoint, c.Checkpoint)
		}
	}
	return e
}

// LabelNote says which checkpoint name was when it is a label the agent
// gave more than one live checkpoint, for a note on stderr; "" otherwise.
func LabelNote(a *agents.Agent, name string) string {
	if _, err := ids.ParseName(name); err == nil || name == "" {
		return ""
	}
	var live []string
	for _, c := range a.Labeled(name) {
		if c.Live() {
			live = append(live, c.Checkpoint)
		}
	}
	if len(live) < 2 {
		return ""
	}
	return fmt.Sprintf("label %s is on %s of %s: %s is the newest (name another by its id)",
		quote.Always(name), quote.Join(live, ", "), a.ID, live[0])
}

type labeled struct{ label, id string }

// cutLabel is label l quoted, cut to width columns (at least `"A lab…"`),
// for a line that must fit 80 columns; --json has it whole.
func cutLabel(l string, width int) string {
	q := quote.Always(l)
	if ui.Width(q) <= width {
		return q
	}
	width = max(width, 8)
	return ui.Cut(quote.Always(ui.Cut(l, width-2)), width)
}

// closeLabels are the labels of the agent's live checkpoints that name is
// likely a typo of (suggest.Close, or the same but for case), each with
// the checkpoint it names, newest first; three at most.
func closeLabels(a *agents.Agent, name string) []labeled {
	var out []labeled
	seen := map[string]bool{}
	a.Latest() // loads a stub agent
	for i := len(a.Checkpoints) - 1; i >= 0 && len(out) < 3; i-- {
		c := a.Checkpoints[i]
		if !c.Live() {
			continue
		}
		for j := len(c.Labels) - 1; j >= 0 && len(out) < 3; j-- {
			l := c.Labels[j]
			if seen[l] {
				continue
			}
			seen[l] = true
			if strings.EqualFold(l, name) || len(suggest.Close(name, []string{l})) > 0 {
				out = append(out, labeled{l, c.Checkpoint})
			}
		}
	}
	return out
}

// BadName is the error for a name ids.ParseName refused, where there is
// no agent whose labels it could be: what the person most likely meant
// where that can be told (ids.Suggest), and where to see the checkpoints.
func BadName(name string, err error) *errcode.Error {
	return badName(errcode.Newf(errcode.InvalidParamsCheckpoint, map[string]string{"checkpoint": name}, "%v", err), name, err, false)
}

// badName adds BadName's hints to e; suggested: e has a did-you-mean
// already (a label).
func badName(e *errcode.Error, name string, err error, suggested bool) *errcode.Error {
	if strings.Contains(err.Error(), ids.NameForms) {
		// The forms on a line of their own: within 80 columns.
		e.Shorter("%s", strings.TrimSuffix(strings.TrimSuffix(err.Error(), ids.NameForms), ": give ")).Hint(ids.FormsHint)
	}
	if s := ids.Suggest(name); s != "" && !suggested {
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
