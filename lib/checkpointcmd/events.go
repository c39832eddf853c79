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
			fmt.Fprintln(out, human(ev))
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

// human is one event as a line: seq, time, type, then its main members,
// each quoted as it comes from the log (a label always, being free text).
func human(ev events.Event) string {
	q := quote.C
	parts := []string{fmt.Sprint(ev.Seq), q(ev.Ts), q(ev.Type)}
	switch d := ev.Data.(type) {
	case events.Checkpoint:
		parts = append(parts, q(d.Agent+"/"+d.Checkpoint), q(d.Reason))
		if d.Label != nil {
			parts = append(parts, quote.Always(*d.Label))
		}
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
	case events.CheckpointReused:
		parts = append(parts, q(d.Agent+"/"+d.Checkpoint), q(d.Reason))
		if d.Turn != nil {
			parts = append(parts, q(*d.Turn))
		}
		if d.Relabeled {
			was := "none"
			if d.PreviousLabel != nil {
				was = quote.Always(*d.PreviousLabel)
			}
			parts = append(parts, "relabeled "+quote.Always(*d.Label)+" (was "+was+")")
		}
	case events.CheckpointsPruned:
		parts = append(parts, q(d.Agent), quote.Join(d.Checkpoints, ","))
	case events.CheckpointsRemoved:
		parts = append(parts, q(d.Agent), fmt.Sprintf("removed %d kept %d", d.Removed, d.Kept))
	case events.Archived:
		parts = append(parts, q(d.Agent))
	}
	return strings.Join(parts, " ")
}
