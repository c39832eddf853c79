// Package checkpointcmd is the grammar of git-venom-checkpoint and the glue
// from its verbs to lib/. Each verb has a file of its own.
package checkpointcmd

import (
	"github.com/alecthomas/kong"
	"strings"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/harness"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// CLI is git-venom-checkpoint's grammar.
type CLI struct {
	cli.Globals

	Take    TakeCmd     `cmd:"" default:"withargs" help:"Take a checkpoint (the default verb: git venom-checkpoint [flags] is take [flags])."`
	List    ListCmd     `cmd:"" help:"List an agent's checkpoints, newest first."`
	Prune   PruneCmd    `cmd:"" help:"Delete checkpoints past retention (venom.keep, venom.keepFor, venom.keepSafety)."`
	Clean   CleanCmd    `cmd:"" help:"Archive an agent and remove its checkpoints."`
	Events  EventsCmd   `cmd:"" help:"Print the event stream, a line an event (--json: JSON lines)."`
	Doctor  DoctorCmd   `cmd:"" help:"Check the repository's checkpoints and state."`
	Agents  AgentsCmd   `cmd:"" help:"List the registered agents."`
	Fork    ForkCmd     `cmd:"" help:"Register a fork sharing an agent's tree, with its own first checkpoint."`
	Hook    HookCmd     `cmd:"" help:"Run as a harness hook, or install the hooks."`
	Push    PushCmd     `cmd:"" help:"Send an agent's checkpoints and log records to a remote (never automatic)."`
	Fetch   FetchCmd    `cmd:"" help:"Bring the checkpoints other machines pushed to a remote, checked, under refs/venom/remotes/."`
	Explain ExplainCmd  `cmd:"" help:"Say which agent turns made a commit's changes (or each commit of A..B)."`
	Help    cli.HelpCmd `cmd:"" help:"Show a verb's flags: help [<verb>...]; the manual is man git-venom-checkpoint."`
}

// New returns the grammar.
func New() *CLI {
	harness.Use() // the harnesses' rewinds and their records of a turn
	return &CLI{Hook: newHookCmd()}
}

// Hints names the harnesses in an error's hints (cli.Hinter).
func (c *CLI) Hints(e *errcode.Error) { harness.Hints(e) }

// ArgValues completes hook install|uninstall <harness> (cli.ArgValuer).
func (c *CLI) ArgValues(name string) []string {
	if name == "harness" {
		return harness.Names()
	}
	return nil
}

// Vars are the harness lists help shows, from the registry (cli.Varser).
func (c *CLI) Vars() map[string]string { return helpVars() }

// Narrow is the part of the grammar that reads `hook <harness> ...`, the
// call a harness makes on every event and, with --per-tool, after every
// tool call: the global flags and that one harness's verb, the very
// types of the whole grammar (cli.Narrower). Anything else is read by
// the whole grammar.
func (c *CLI) Narrow(args []string) any {
	if len(args) < 2 || args[0] != "hook" {
		return nil
	}
	k := harness.Lookup(args[1])
	if k == nil {
		return nil
	}
	return &hookCLI{Hook: hookVerb{Harness: kong.Plugins{harnessVerbs([]*kind.Kind{k})}}}
}

// hookCLI is CLI narrowed to one harness's hook verb; its fields carry
// CLI's tags (TestNarrow_SameGrammar).
type hookCLI struct {
	cli.Globals

	Hook hookVerb `cmd:"" help:"Run as a harness hook, or install the hooks."`
}

// hookVerb is HookCmd without install and uninstall.
type hookVerb struct {
	Harness kong.Plugins `embed:""`
}

// Vars are CLI's (cli.Varser).
func (c *hookCLI) Vars() map[string]string { return helpVars() }

func helpVars() map[string]string {
	via, viaHelp := harness.Via()
	viaDefault := ""
	if len(via) > 0 {
		viaDefault = via[0]
	}
	return map[string]string{
		"harnesses":     harness.NameList(),
		"agents":        harness.Or(harness.Agents()),
		"local_example": harness.Where("local")[0],
		"via":           strings.Join(via, ","),
		"via_default":   viaDefault,
		"via_help":      viaHelp,
		"notify_help":   harness.NotifyHelp(),
	}
}

func notYet(verb string) error {
	return errcode.Newf(errcode.UnsupportedNotYet, map[string]string{"verb": verb}, "%s is not available yet", verb)
}
