package checkpointcmd

import (
	"fmt"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/retention"
	"github.com/git-venom/git-venom/lib/ui"
)

// CleanCmd archives an agent and removes its checkpoints (docs/checkpoints.md#retention-and-clean).
type CleanCmd struct {
	Agent  string `name:"agent" env:"VENOM_AGENT" help:"The agent to archive (default: VENOM_AGENT, or this worktree's only agent)."`
	DryRun bool   `name:"dry-run" help:"Say what would be removed and kept; change nothing."`
}

// Run cleans.
func (c *CleanCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	tx, err := begin(env.Ctx, s, "clean", c.Agent)
	if err != nil {
		return err
	}
	defer tx.End()
	a, err := tx.State.Named(c.Agent)
	if err != nil {
		return err
	}
	var res *retention.Cleaned
	if c.DryRun {
		res = retention.CleanDryRun(tx, a)
	} else if res, err = retention.Clean(env.Ctx, tx, a); err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	bold := env.UI.OutStyle(color.Bold)
	if c.DryRun {
		env.UI.Printf("Would archive %s.\n", bold(quote.C(a.ID)))
	} else {
		env.UI.Printf("Archived %s.\n", bold(quote.C(a.ID)))
	}
	for _, l := range res.Checkpoints {
		verb := "removed %d %s, kept %d"
		if c.DryRun {
			verb = "would remove %d %s, keep %d"
		}
		env.UI.Printf("%s: "+verb+".\n", quote.C(l.Agent), l.Removed, plural(l.Removed, "checkpoint"), l.Kept)
		for _, k := range retention.WhyKept(tx, tx.State.Agents[l.Agent]) {
			env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("  %s: %s.", quote.Join(k.Checkpoints, ", "), k.Why), ui.Columns80, ""))
		}
		printFailures(env, l.Agent, l.Failed)
	}
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
