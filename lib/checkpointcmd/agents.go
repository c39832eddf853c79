package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// AgentsCmd lists the registered agents.
type AgentsCmd struct{}

// Run lists.
func (c *AgentsCmd) Run(env *cli.Env) error { return notYet("agents") }
