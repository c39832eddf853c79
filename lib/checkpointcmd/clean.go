package checkpointcmd

import (
	"fmt"
	"reflect"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/retention"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// CleanCmd archives an agent and removes its checkpoints (docs/checkpoints.md#retention-and-clean).
type CleanCmd struct {
	Agent  string `name:"agent" env:"VENOM_AGENT" help:"The agent to archive (default: VENOM_AGENT, or this worktree's only agent)."`
	DryRun bool   `name:"dry-run" help:"Say what would be removed and kept; change nothing."`
}

// Run cleans. At a terminal (standard input and output, no --json) it
// first shows what it would remove and asks, as a rollback does: clean
// takes history away, and the agent may be one the person did not name.
// Anywhere else it cleans at once, as scripts and hooks expect.
func (c *CleanCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	if !c.DryRun && !env.JSON && env.UI.InTTY && env.UI.OutTTY {
		return c.ask(env, s)
	}
	tx, a, err := c.open(env, s)
	if err != nil {
		return err
	}
	defer tx.End()
	var res *retention.Cleaned
	if c.DryRun {
		res = retention.CleanDryRun(tx, a)
	} else if res, err = retention.Clean(env.Ctx, tx, a); err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	c.print(env, tx, a, res)
	return nil
}

// ask shows the dry run, asks, and cleans on yes. The lock is not held
// while the person reads (hooks would wait on it): the clean takes it
// again and goes ahead only when it would remove what was shown; when
// captures or prunes changed that, the new counts are shown and asked.
// No, an empty answer, Ctrl-C or end of input change nothing.
func (c *CleanCmd) ask(env *cli.Env, s *state.Store) error {
	in := cli.NewPrompter(env)
	shown, err := c.dryRun(env, s)
	if err != nil {
		return err
	}
	for {
		n := 0
		for _, l := range shown.Checkpoints {
			n += l.Removed
		}
		env.UI.Printf("Archive %s and remove %d %s? [y/N] ", quote.C(shown.Agent), n, plural(n, "checkpoint"))
		yes, ok := in.Choose("y", "yes", "Answer y to clean or n to stop. [y/N] ")
		if !ok {
			env.UI.Printf("\nNothing was changed.\n")
			return cli.Silent{Code: cli.AbortCode}
		}
		if !yes {
			env.UI.Printf("Nothing was changed.\n")
			return nil
		}
		tx, a, err := c.open(env, s)
		if err != nil {
			return err
		}
		if now := retention.CleanDryRun(tx, a); a.ID != shown.Agent || !reflect.DeepEqual(now.Checkpoints, shown.Checkpoints) {
			tx.End()
			env.UI.Printf("%s\n", env.UI.OutStyle(color.FgYellow, color.Bold)("Changed while you answered:"))
			if shown, err = c.dryRun(env, s); err != nil {
				return err
			}
			continue
		}
		res, err := retention.Clean(env.Ctx, tx, a)
		if err == nil {
			c.print(env, tx, a, res)
		}
		tx.End()
		return err
	}
}

// dryRun prints what a clean would do, under the lock, and returns it.
func (c *CleanCmd) dryRun(env *cli.Env, s *state.Store) (*retention.Cleaned, error) {
	tx, a, err := c.open(env, s)
	if err != nil {
		return nil, err
	}
	defer tx.End()
	res := retention.CleanDryRun(tx, a)
	c.print(env, tx, a, res)
	return res, nil
}

// open takes the lock for the clean and reads the agent it cleans; on
// an error it holds nothing.
func (c *CleanCmd) open(env *cli.Env, s *state.Store) (*state.Txn, *agents.Agent, error) {
	tx, err := begin(env.Ctx, s, "clean", c.Agent)
	if err != nil {
		return nil, nil, err
	}
	a, err := tx.State.Named(c.Agent)
	if err != nil {
		tx.End()
		return nil, nil, err
	}
	return tx, a, nil
}

func (c *CleanCmd) print(env *cli.Env, tx *state.Txn, a *agents.Agent, res *retention.Cleaned) {
	bold := env.UI.OutStyle(color.Bold)
	if res.DryRun {
		env.UI.Printf("Would archive %s.\n", bold(quote.C(a.ID)))
	} else {
		env.UI.Printf("Archived %s.\n", bold(quote.C(a.ID)))
	}
	for _, l := range res.Checkpoints {
		verb := "removed %d %s, kept %d"
		if res.DryRun {
			verb = "would remove %d %s, keep %d"
		}
		env.UI.Printf("%s: "+verb+".\n", quote.C(l.Agent), l.Removed, plural(l.Removed, "checkpoint"), l.Kept)
		for _, k := range retention.WhyKept(tx, tx.State.Agents[l.Agent]) {
			env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("  %s: %s.", quote.Join(k.Checkpoints, ", "), k.Why), ui.Columns80, ""))
		}
		printFailures(env, l.Agent, l.Failed)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
