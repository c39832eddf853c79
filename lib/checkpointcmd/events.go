package checkpointcmd

import "github.com/git-venom/git-venom/lib/cli"

// EventsCmd prints the event stream (RFC 11.2).
type EventsCmd struct {
	Types     string `name:"types" help:"Event types: a JSON array or a comma list; exact names or prefix.*."`
	Resources string `name:"resources" help:"Resources: a JSON array or a comma list of agent:<id>."`
	Since     int64  `name:"since" help:"Only events after this seq."`
	Follow    bool   `name:"follow" help:"Wait for new events until interrupted."`
}

// Run prints events.
func (c *EventsCmd) Run(env *cli.Env) error { return notYet("events") }
