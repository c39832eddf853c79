// Package rollbackcmd is the grammar of git-venom-rollback.
package rollbackcmd

import (
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
)

// CLI is git-venom-rollback's grammar.
type CLI struct {
	cli.Globals
	Agent      string `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or the repository's only agent)."`
	Checkpoint string `name:"checkpoint" help:"The checkpoint to go back to (k<n>)."`
	Restore    string `name:"restore" default:"all" enum:"all,files" help:"all: files and conversation, or refuse; files: files only."`
	Outside    string `name:"outside" enum:",refuse,keep,overwrite" default:"" help:"Paths changed outside the agent's turns: refuse (default in a guarded tree), keep or overwrite (default elsewhere)."`
	KeepHead   bool   `name:"keep-head" help:"Restore the files and leave HEAD where it is."`
	DryRun     bool   `name:"dry-run" help:"Say what would change, and return the plan the real call must quote."`
	Plan       string `name:"plan" help:"The plan from the dry run."`
}

// New returns the grammar.
func New() *CLI { return &CLI{} }

// Run is not there yet.
func (c *CLI) Run(env *cli.Env) error {
	return errcode.Newf(errcode.UnsupportedNotYet, nil, "git venom-rollback is not available yet")
}
