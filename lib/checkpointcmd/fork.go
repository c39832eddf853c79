package checkpointcmd

import (
	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/quote"
)

// ForkCmd registers a fork (docs/rollback.md#forks): git venom-checkpoint fork --agent=NEW --from=SRC [--through-turn=T].
type ForkCmd struct {
	Agent       string `name:"agent" required:"" help:"The new agent."`
	From        string `name:"from" required:"" complete:"agent" help:"The source agent."`
	ThroughTurn string `name:"through-turn" complete:"turn" help:"The source's turn the fork's conversation goes through (default: its latest)."`
}

// Run forks.
func (c *ForkCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	res, err := checkpoints.TakeFork(env.Ctx, s, checkpoints.ForkRequest{Agent: c.Agent, From: c.From,
		ThroughTurn: c.ThroughTurn})
	if err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	bold := env.UI.OutStyle(color.Bold)
	q := quote.C
	agent, from := q(res.Agent), q(res.From)
	through := "before its first turn"
	if res.ThroughTurn != nil {
		through = "through " + q(*res.ThroughTurn)
	}
	if res.ForkCheckpoint == nil {
		env.UI.Printf("Forked %s from %s %s. %s has no checkpoint at that point, so %s has none yet.\n",
			bold(agent), from, through, from, agent)
		return nil
	}
	env.UI.Printf("Forked %s from %s %s: %s/%s is %s/%s's files.\n", bold(agent), from, through,
		agent, bold(q(*res.ForkCheckpoint)), from, q(*res.Checkpoint))
	env.UI.Printf("The files are as they are now; git venom-rollback --agent=%s --checkpoint=%s --restore=files lines them up.\n",
		agent, q(*res.ForkCheckpoint))
	return nil
}
