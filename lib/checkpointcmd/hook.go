package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// HookCmd runs as a harness hook.
type HookCmd struct {
	Harness string   `arg:"" help:"claude-code, codex, install or uninstall."`
	Rest    []string `arg:"" optional:"" passthrough:"" help:"More arguments."`
}

// Run runs the hook.
func (c *HookCmd) Run(env *cli.Env) error { return notYet("hook") }
