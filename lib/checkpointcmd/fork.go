package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// ForkCmd registers a fork (RFC 10).
type ForkCmd struct {
	Agent       string `name:"agent" required:"" help:"The new agent."`
	From        string `name:"from" required:"" help:"The source agent."`
	ThroughTurn string `name:"through-turn" help:"The source's turn the fork's conversation goes through."`
}

// Run forks.
func (c *ForkCmd) Run(env *cli.Env) error { return notYet("fork") }
