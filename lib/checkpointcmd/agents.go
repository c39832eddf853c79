package checkpointcmd

import (
	"fmt"
	"strings"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/ui"
)

// AgentsCmd lists the registered agents.
type AgentsCmd struct{}

// AgentItem is one agent: id, state, tree, isolation, harness, guarded,
// sharers, parent, its number of live checkpoints and the newest one.
type AgentItem struct {
	Agent       string   `json:"agent"`
	State       string   `json:"state"`
	Tree        string   `json:"tree"`
	Isolation   string   `json:"isolation"`
	Harness     string   `json:"harness"`
	Guarded     bool     `json:"guarded"`
	Sharers     []string `json:"sharers"`
	Parent      *string  `json:"parent"`
	Checkpoints int      `json:"checkpoint_count"`
	Newest      *string  `json:"newest"`
}

// AgentsResult is agents' result.
type AgentsResult struct {
	Agents []AgentItem `json:"agents"`
}

// Run lists, in registration order.
func (c *AgentsCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	// Stubs: what a row reads of an agent is in the fold snapshot's part
	// of all agents, its live checkpoints included (agents.Kept), so two
	// thousand agents cost that part, not their histories.
	st, err := s.ReadStubs()
	if err != nil {
		return err
	}
	sh := st.Sharing()
	res := AgentsResult{Agents: []AgentItem{}}
	for _, id := range st.Order {
		res.Agents = append(res.Agents, agentItem(st.Agents[id], sh))
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	if len(res.Agents) == 0 {
		env.UI.Printf("No agents.\n")
		return nil
	}
	bold := env.UI.OutStyle(color.Bold)
	dim := env.UI.OutStyle(color.Faint)
	yellow := env.UI.OutStyle(color.FgYellow)
	w := ui.NewTable(env.UI.Out)
	// Trees are long paths: they go below the table, each on a line of
	// its own with the agents in it, so the table fits 80 columns.
	w.Row(dim("AGENT"), dim("STATE"), dim("ISOLATION"), dim("HARNESS"), dim("KEPT"), dim("NEWEST"), dim("GUARDED"))
	// Each column is read from the log: quoted (ids, trees and harnesses
	// of an agent registered by hand may hold anything).
	q := quote.C
	var trees []string
	in := map[string][]string{}
	for _, a := range res.Agents {
		// An archived agent cannot be rolled back: whether it would be
		// guarded, and with whom, means nothing.
		guarded := "-"
		switch {
		case a.State == agents.Archived:
		case len(a.Sharers) > 0:
			guarded = yellow("shared")
		case a.Guarded:
			guarded = yellow("yes")
		default:
			guarded = "no"
		}
		newest := "-"
		if a.Newest != nil {
			newest = q(*a.Newest)
		}
		id := bold(q(a.Agent))
		if a.Parent != nil {
			id += dim(" ← " + q(*a.Parent))
		}
		w.Row(id, q(a.State), q(a.Isolation), q(a.Harness), fmt.Sprint(a.Checkpoints), newest, guarded)
		if _, ok := in[a.Tree]; !ok {
			trees = append(trees, a.Tree)
		}
		name := q(a.Agent)
		if a.State == agents.Archived {
			name += dim(" (archived)")
		}
		in[a.Tree] = append(in[a.Tree], name)
	}
	// An id too long for the row loses its middle; TREES below and
	// --json name it whole.
	w.Fit(ui.Columns80, 0, ui.CutMiddle)
	if err := w.Flush(); err != nil {
		return err
	}
	env.UI.Printf("\n%s\n", dim("TREES"))
	for _, t := range trees {
		env.UI.Printf("%s\n%s\n", q(t), ui.Wrap("  "+strings.Join(in[t], ", "), ui.Columns80, ""))
	}
	return nil
}

// agentItem is a's row, its sharers and whether it is guarded read from
// sh, as a rollback's guard reads them.
func agentItem(a *agents.Agent, sh agents.Sharing) AgentItem {
	it := AgentItem{Agent: a.ID, State: a.State, Tree: a.Tree, Isolation: a.Isolation, Harness: a.Harness,
		Sharers: []string{}, Guarded: sh.Guarded(a)}
	for _, o := range sh.Sharers(a) {
		it.Sharers = append(it.Sharers, o.ID)
	}
	if a.Parent != "" {
		p := a.Parent
		it.Parent = &p
	}
	it.Checkpoints = a.LiveCount()
	if id := a.Newest(); id != "" {
		it.Newest = &id
	}
	return it
}
