// Package diffcmd is the grammar of git-venom-diff.
package diffcmd

import (
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
)

// CLI is git-venom-diff's grammar.
type CLI struct {
	cli.Globals
	Agent string   `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or the repository's only agent)."`
	From  string   `name:"from" help:"The checkpoint to compare from (k<n>)."`
	To    string   `name:"to" help:"The checkpoint to compare to (k<n>); the current files when left out."`
	Repo  string   `name:"repo" default:"." help:"The repository of the agent's scope (always .)."`
	Path  string   `name:"path" help:"Show the patch of this path."`
	Args  []string `arg:"" optional:"" help:"Short forms: <from> [<to>]."`
}

// New returns the grammar.
func New() *CLI { return &CLI{} }

// Run is not there yet.
func (c *CLI) Run(env *cli.Env) error {
	return errcode.Newf(errcode.UnsupportedNotYet, nil, "git venom-diff is not available yet")
}
