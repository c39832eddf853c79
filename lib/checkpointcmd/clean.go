package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// CleanCmd archives an agent and removes its checkpoints (RFC 5.3).
type CleanCmd struct {
	Agent string `name:"agent" env:"VENOM_AGENT" required:"" help:"The agent to archive."`
}

// Run cleans.
func (c *CleanCmd) Run(env *cli.Env) error { return notYet("clean") }
