package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// DoctorCmd checks the repository's checkpoints and state.
type DoctorCmd struct{}

// Run checks.
func (c *DoctorCmd) Run(env *cli.Env) error { return notYet("doctor") }
