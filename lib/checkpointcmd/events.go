package checkpointcmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/events"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// EventsCmd prints the event stream (docs/json.md#events).
type EventsCmd struct {
	Types     string `name:"types" help:"Event types: a JSON array or a comma list; exact names or prefix.*."`
	Resources string `name:"resources" help:"Resources: a JSON array or a comma list of agent:<id>."`
	Since     int64  `name:"since" help:"Only events after this seq."`
	Follow    bool   `name:"follow" help:"Wait for new events until interrupted."`
}

// Run prints events: one JSON object a line with --json, a short line each
// otherwise.
func (c *EventsCmd) Run(env *cli.Env) error {
	f, err := events.ParseFilter(c.Types, c.Resources)
	if err != nil {
		return err
	}
	s, err := env.Store()
	if err != nil {
		return err
	}
	source, err := events.Source(s.Repo.StateDir)
	if err != nil {
		return state.Failed("read", filepath.Join(s.Repo.StateDir, "source"), err)
	}
	st := events.NewStream(s.Repo.Log, s.Repo.StateDir, source, f, c.Since)
	if !c.Follow {
		// A followed stream is read as it comes: never paged.
		defer env.UI.Page()()
	}
	// One write for the whole answer, not one a line: a long log has
	// thousands of events. Followed, each event goes out as it comes.
	out := bufio.NewWriterSize(env.UI.Out, 64<<10)
	// The encoding of ui.Marshal, one object a line.
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	emit := func(ev events.Event) error {
		if env.JSON {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(out, human(ev).fit(ui.Columns80))
		}
		if c.Follow {
			return out.Flush()
		}
		return nil
	}
	if c.Follow {
		return st.Follow(env.Ctx, emit)
	}
	evs, err := st.Next()
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return out.Flush()
}

// eventLine is an event's human line in parts: the agent's part and the
// label, where it has them, are what fit cuts.
type eventLine struct {
	parts []string
	agent int     // the part naming the agent; 0 for none
	label *string // the label, last, not yet quoted
	// was is a relabel's earlier label ("" for none), before the new
	// one, each cut to fit (fitRelabel); list a list of ids, last (a prune's
	// checkpoints), n of them, cut or left out to fit.
	was  *string
	list string
	n    int
}

// fit is the line within width columns, as git's --oneline keeps a
// commit to one line: a label too long for the rest of the line is cut
// ("…"), then an agent id loses its middle; --json has them whole. It
// stays one line, so no label can pass for an event of its own.
func (l eventLine) fit(width int) string {
	line := strings.Join(l.parts, " ")
	if l.list != "" {
		count := fmt.Sprintf(" (%d)", l.n)
		switch room := width - ui.Width(line) - 1; {
		case ui.Width(l.list) <= room:
			line += " " + l.list
		case room >= minLabel+len(count):
			line += " " + ui.Cut(l.list, room-len(count)) + count
		default:
			line += count
		}
	}
	if l.label != nil && l.was != nil {
		return l.fitRelabel(line, width)
	}
	if l.label != nil {
		full := quote.Always(*l.label)
		switch room := width - ui.Width(line) - 1; {
		case ui.Width(full) <= room:
			line += " " + full
		case room >= minLabel:
			line += " " + ui.Cut(quote.Always(ui.Cut(*l.label, room-2)), room)
		default:
			line += ` "…"` // there is one
		}
	}
	if over := ui.Width(line) - width; over > 0 && l.agent > 0 {
		parts := append([]string(nil), l.parts...)
		parts[l.agent] = ui.CutMiddle(parts[l.agent], minID) // the same for each line of one agent
		return eventLine{parts: parts, label: l.label, was: l.was, list: l.list, n: l.n}.fit(width)
	}
	return line
}

// fitRelabel ends a relabel's line with the label it replaced, then the
// new one ("before" → "after"), each cut to its share of the room: the
// old label is never left out, since it still names the checkpoint.
// Where even short cuts would not fit, the agent's id loses its middle
// first. A checkpoint that had no label shows the new one alone.
func (l eventLine) fitRelabel(line string, width int) string {
	if *l.was == "" {
		return eventLine{parts: l.parts, agent: l.agent, label: l.label}.fit(width)
	}
	was, now := quote.Always(*l.was), quote.Always(*l.label)
	room := width - ui.Width(line) - len(" ") - ui.Width(" → ")
	if short := 2*minLabel - room; short > 0 && l.agent > 0 {
		// To minID, as on the agent's other lines; shorter only where
		// the labels need it.
		id := ui.Width(l.parts[l.agent])
		to := max(id-short, minRelabelID)
		if id > minID {
			to = min(to, minID)
		}
		if to < id {
			parts := append([]string(nil), l.parts...)
			parts[l.agent] = ui.CutMiddle(parts[l.agent], to)
			return eventLine{parts: parts, agent: l.agent, label: l.label, was: l.was}.fit(width)
		}
	}
	if a, b := ui.Width(was), ui.Width(now); a+b > room {
		half := room / 2
		switch {
		case a <= half:
			b = room - a
		case b <= half:
			a = room - b
		default:
			a, b = half, room-half
		}
		was, now = cutQuoted(*l.was, a), cutQuoted(*l.label, b)
	}
	return line + " " + was + " → " + now
}

// cutQuoted is s quoted, cut to width columns but never below `"…"`.
func cutQuoted(s string, width int) string {
	width = max(width, ui.Width(`"…"`))
	return ui.Cut(quote.Always(ui.Cut(s, width-2)), width)
}

// minLabel is the least fit cuts a label to (`"A lab…"` still says
// which); minID is what an agent's part too long is cut to, the same on
// every line (`gemini-8c4d2e…c3d4e5f/k3`).
const minLabel, minID = 8, 24

// minRelabelID is the least a relabel's line cuts the agent's part to,
// to make room for its two labels.
const minRelabelID = 12

// seconds is an event's time to the second, as a person reads it
// (2026-12-05T18:34:26Z); --json keeps the milliseconds.
func seconds(ts string) string {
	if i := strings.LastIndexByte(ts, '.'); i > 0 && strings.HasSuffix(ts, "Z") {
		return ts[:i] + "Z"
	}
	return ts
}

// human is one event as a line: seq, time, type, then its main members,
// each quoted as it comes from the log (a label always, being free text).
func human(ev events.Event) eventLine {
	q := quote.C
	parts := []string{fmt.Sprint(ev.Seq), q(seconds(ev.Ts)), q(ev.Type)}
	var label *string
	switch d := ev.Data.(type) {
	case events.Checkpoint:
		parts = append(parts, q(d.Agent+"/"+d.Checkpoint), q(d.Reason))
		label = d.Label
	case events.CheckpointFailed:
		parts = append(parts, q(d.Agent), q(d.Reason), q(d.Code))
	case events.RollbackStarted:
		parts = append(parts, q(d.Agent+"/"+d.Checkpoint), "safety "+q(d.Safety), q(d.Restore))
		if d.Revert != "" {
			parts = append(parts, "revert "+q(d.Revert)) // a revert's end, not a point gone back to
		}
	case events.RollbackEnded:
		res := "ok"
		if !d.OK {
			res = d.Code
		}
		parts = append(parts, q(d.Agent+"/"+d.Checkpoint), "safety "+q(d.Safety), q(d.Restore), q(res))
		if d.Revert != "" {
			parts = append(parts, "revert "+q(d.Revert))
		}
	case events.TurnStarted:
		parts = append(parts, q(d.Agent+"/"+d.Turn))
	case events.TurnEnded:
		parts = append(parts, q(d.Agent+"/"+d.Turn))
		if d.NoStart {
			parts = append(parts, "(no turn_start)")
		}
		if d.NoEnd {
			parts = append(parts, "(no turn_end: closed by the next turn_start)")
		}
	case events.CheckpointReused:
		parts = append(parts, q(d.Agent+"/"+d.Checkpoint))
		if d.Relabeled {
			// The label it replaced, then the new one, each cut to
			// fit; the reason and turn are --json's.
			parts = append(parts, "relabeled")
			label, was := d.Label, ""
			if d.PreviousLabel != nil {
				was = *d.PreviousLabel
			}
			return eventLine{parts: parts, agent: 3, label: label, was: &was}
		}
		parts = append(parts, q(d.Reason))
		if d.Turn != nil {
			parts = append(parts, q(*d.Turn))
		}
	case events.CheckpointsPruned:
		parts = append(parts, q(d.Agent))
		return eventLine{parts: parts, agent: 3, list: quote.Join(d.Checkpoints, ","), n: len(d.Checkpoints)}
	case events.CheckpointsRemoved:
		parts = append(parts, q(d.Agent), fmt.Sprintf("removed %d kept %d", d.Removed, d.Kept))
	case events.Archived:
		parts = append(parts, q(d.Agent))
	}
	agent := 0
	if len(parts) > 3 {
		agent = 3 // every type names its agent first
	}
	return eventLine{parts: parts, agent: agent, label: label}
}
