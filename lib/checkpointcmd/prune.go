package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// PruneCmd deletes checkpoints past retention (RFC 5.2).
type PruneCmd struct {
	Agent string `name:"agent" env:"VENOM_AGENT" help:"Only this agent's checkpoints."`
}

// Run prunes.
func (c *PruneCmd) Run(env *cli.Env) error { return notYet("prune") }
