package checkpointcmd

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// ListCmd lists checkpoints: git venom-checkpoint list [--agent] [--turn] [--before] [--limit].
type ListCmd struct {
	Agent  string `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or this worktree's only agent), or a fetched copy, <remote>/<agent> or <remote>/<machine>/<agent>."`
	Turn   string `name:"turn" complete:"turn" help:"Only checkpoints of this turn (t<n>)."`
	Before string `name:"before" complete:"checkpoint" help:"Only checkpoints older than this one, exclusive: k<n>, last, last~<n> (n back from last), t<n> (that turn's end) or a label."`
	Limit  int    `name:"limit" short:"n" aliases:"max-count" default:"50" help:"At most this many (also -n, --max-count, as git log)."`
	Tools  bool   `name:"tools" help:"Also the tool calls hook --per-tool marked (t<n>.<i>), among the checkpoints listed."`
}

// Run lists.
func (c *ListCmd) Run(env *cli.Env) error {
	if c.Limit < 1 {
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]int{"limit": c.Limit},
			"--limit=%d: a limit is 1 or more", c.Limit)
	}
	s, err := env.Store()
	if err != nil {
		return err
	}
	var st *agents.State
	var a *agents.Agent
	// --before=a1/k3 names its agent, as the output names checkpoints.
	if agent, before, _, err := share.NewLocals(env.Ctx, s).Pair(c.Before, ""); err != nil {
		return err
	} else if agent != "" {
		if err := share.LocalAgrees(c.Agent, env.Getenv("VENOM_AGENT"), agent, c.Before); err != nil {
			return err
		}
		c.Agent, c.Before = agent, before
	}
	if c.Agent, err = share.Named(env.Ctx, s, c.Agent); err != nil {
		return err
	}
	if share.IsCopy(c.Agent) {
		// A fetched copy (push, fetch): its own log copy, checked again.
		st, a, err = share.ReadCopy(env.Ctx, s, c.Agent)
	} else {
		// A listing is the agent's own: reading only its records makes it
		// cost what its history costs, whatever other agents wrote. The
		// agent left out is the only one (Named), whole once found.
		if c.Agent != "" {
			st, err = s.ReadAgent(c.Agent)
		} else {
			st, err = s.ReadStubs()
		}
	}
	if err != nil {
		return err
	}
	if a == nil && c.Agent == "" && len(st.Order) == 0 {
		// No agent yet, so no checkpoint: as git stash list with no
		// stash, an empty listing and exit 0, not an error a script must
		// tell from a real one.
		if env.JSON {
			return env.UI.JSON(emptyListing{Checkpoints: []checkpoints.Item{}})
		}
		if !env.UI.Quiet() {
			env.UI.Errorf("No checkpoints: no agent is registered in this repository yet.\n")
		}
		return nil
	}
	if a == nil {
		if a, err = st.Named(c.Agent); err != nil {
			if c.Agent != "" && errcode.Is(err, errcode.NotFoundAgent) {
				// Read for one agent without a fold snapshot, st holds no
				// other: the same error, with the agents it may be a typo
				// of, whose stubs are enough (not every agent whole).
				if all, rerr := s.ReadStubs(); rerr == nil {
					_, err = all.Named(c.Agent)
				}
			}
			return err
		}
		if err := st.Load(a.ID); err != nil {
			return state.Failed("read", s.Repo.Log, err)
		}
	}
	l, err := checkpoints.List(s.Repo, a, checkpoints.Filter{Turn: c.Turn, Before: c.Before, Limit: c.Limit})
	if err != nil {
		return err
	}
	// On stderr, as git's "warning: ignoring broken ref": the listing
	// itself, table or JSON, holds only checkpoints that can be used.
	for _, id := range l.Unusable {
		env.UI.Errorf("warning: ignoring %s/%s: its ref is gone or moved; git venom-checkpoint doctor says more\n",
			quote.C(a.ID), quote.C(id))
	}
	l.Pending = checkpoints.Pending(s, a.ID)
	var calls []toolRow
	if c.Tools {
		calls = c.toolRows(a, l)
	}
	if env.JSON {
		if c.Tools {
			rows := make([]checkpoints.ToolItem, len(calls))
			for i, r := range calls {
				rows[i] = r.ToolItem
			}
			return env.UI.JSON(struct {
				*checkpoints.Listing
				Tools []checkpoints.ToolItem `json:"tools"`
			}{l, rows})
		}
		return env.UI.JSON(l)
	}
	if len(l.Checkpoints) == 0 && len(calls) == 0 {
		env.UI.Printf("No checkpoints for %s.\n", quote.C(a.ID))
		return nil
	}
	defer env.UI.Page()()
	bold := env.UI.OutStyle(color.Bold)
	dim := env.UI.OutStyle(color.Faint)
	w := ui.NewTable(env.UI.Out)
	w.Row(dim("ID"), dim("REASON"), dim("TURN"), dim("AGE"), dim("FILES"), dim("LABEL"))
	// Every column but FILES is read from the log: quoted, so a label
	// cannot drive the terminal or forge a row.
	for _, it := range l.Checkpoints {
		for len(calls) > 0 && calls[0].seq > seqOf(a, it.Checkpoint) {
			t := calls[0]
			calls = calls[1:]
			w.Row(bold(quote.C(t.Call)), quote.C(t.Tool), quote.C(t.Turn), age(t.At), "-", quote.Text(cut(t.Command, 36)))
		}
		changed := "-"
		if it.FilesChanged != nil {
			changed = fmt.Sprint(*it.FilesChanged)
		}
		turn := "-"
		if it.Turn != nil {
			turn = *it.Turn
		} else if t := startedAt(a, it.Checkpoint); t != "" {
			// Taken outside the turns (a rollback's, a manual one),
			// then reused by a turn's start: that turn began there.
			turn = t
		}
		// Every label it was given, as --json's labels: a reuse with a
		// new label keeps the earlier ones, which still name it.
		w.Row(bold(quote.C(it.Checkpoint)), quote.C(it.Reason), quote.C(turn), age(it.At), changed, quote.Join(it.Labels, ", "))
	}
	for _, t := range calls {
		w.Row(bold(quote.C(t.Call)), quote.C(t.Tool), quote.C(t.Turn), age(t.At), "-", quote.Text(cut(t.Command, 36)))
	}
	w.Fit(ui.Columns80, 5, ui.Cut) // the labels: --json has them whole
	if l.Pending {
		w.Note("(a capture is pending)")
	}
	if l.MoreCount > 0 {
		// As git log ends a page: how many are left, and the command
		// that lists them.
		next := c.nextPage(a.ID, l.Checkpoints[len(l.Checkpoints)-1].Checkpoint)
		line := fmt.Sprintf("… %d more, older: %s", l.MoreCount, next)
		if ui.Width(line) > 80 {
			line = fmt.Sprintf("… %d more, older:\n  %s", l.MoreCount, next)
		}
		w.Note(line)
	}
	return w.Flush()
}

// emptyListing is list --json where no agent is registered: the shape of
// a listing, with no agent to name.
type emptyListing struct {
	Agent       *string            `json:"agent"`
	Pending     bool               `json:"pending"`
	Checkpoints []checkpoints.Item `json:"checkpoints"`
	MoreCount   int                `json:"more_count"`
}

// nextPage is the command that lists what a listing left out past its
// limit: the same filter, before the oldest checkpoint shown.
func (c *ListCmd) nextPage(agent, oldest string) string {
	argv := []string{"git", "venom-checkpoint", "list"}
	if c.Agent != "" {
		argv = append(argv, "--agent="+agent)
	}
	if c.Turn != "" {
		argv = append(argv, "--turn="+c.Turn)
	}
	if c.Limit != 50 {
		argv = append(argv, fmt.Sprintf("--limit=%d", c.Limit))
	}
	return quote.Shell(append(argv, "--before="+oldest))
}

// age is how long ago at was; a time that does not parse is shown as
// the log holds it, quoted: a log (a fetched copy's above all) is free
// text, and the raw string reached the terminal.
func age(at string) string {
	t, err := time.Parse(journal.TimeFormat, at)
	if err != nil {
		return quote.C(at)
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return strings.TrimSuffix(fmt.Sprintf("%dd", int(d.Hours()/24)), "")
}

// toolRow is a marked tool call list --tools shows, with its record's seq
// to place it among the checkpoints.
type toolRow struct {
	checkpoints.ToolItem
	seq int64
}

// toolRows are the marked tool calls among the checkpoints listed, newest
// first: those of --turn's turn, or of every turn, newer than the oldest
// checkpoint listed when older ones were left out, and older than
// --before's.
func (c *ListCmd) toolRows(a *agents.Agent, l *checkpoints.Listing) []toolRow {
	var lower, upper int64 = 0, 1<<63 - 1
	if n := len(l.Checkpoints); n > 0 && l.MoreCount > 0 {
		lower = seqOf(a, l.Checkpoints[n-1].Checkpoint)
	}
	if c.Before != "" {
		if id, err := checkpoints.Resolve(a, c.Before); err == nil {
			upper = seqOf(a, id)
		}
	}
	var out []toolRow
	for i := len(a.Turns) - 1; i >= 0; i-- {
		t := a.Turns[i]
		if c.Turn != "" && t.ID != c.Turn {
			continue
		}
		if end := a.Checkpoint(t.EndCheckpoint); end != nil && !end.Live() {
			continue // pruned with its turn's end (docs/checkpoints.md#tool-calls)
		}
		for j := len(t.Tools) - 1; j >= 0; j-- {
			tc := t.Tools[j]
			if tc.Seq > lower && tc.Seq < upper {
				out = append(out, toolRow{checkpoints.ToolItem{Call: tc.Mark, Turn: t.ID, Tool: tc.Tool,
					Command: tc.Command, At: tc.At, Commit: tc.Commit}, tc.Seq})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq > out[j].seq })
	return out
}

// seqOf is a checkpoint's record's seq, 0 when the fold has none.
func seqOf(a *agents.Agent, id string) int64 {
	if k := a.Checkpoint(id); k != nil {
		return k.Seq
	}
	return 0
}

// cut shortens s to n characters, with an ellipsis.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// startedAt is the turn whose start reused checkpoint id, or "".
func startedAt(a *agents.Agent, id string) string {
	for _, t := range a.Turns {
		if t.StartCheckpoint == id {
			return t.ID
		}
	}
	return ""
}
