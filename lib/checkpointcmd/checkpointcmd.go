// Package checkpointcmd is the grammar of git-venom-checkpoint and the glue
// from its verbs to lib/. Each verb has a file of its own.
package checkpointcmd

import (
	"slices"
	"strings"

	"github.com/alecthomas/kong"

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
// types of the whole grammar (cli.Narrower); and, for a take (the
// default verb) and the verbs in narrowVerbs, the part of that one verb,
// where flagWords allows. Anything else is read by the whole grammar.
func (c *CLI) Narrow(args []string) any {
	if takeWords(args) {
		return &takeCLI{}
	}
	if len(args) > 0 {
		if v, ok := narrowVerbs[args[0]]; ok && flagWords(args[1:], v.valued) {
			return v.grammar()
		}
	}
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

// takeCLI is CLI narrowed to take; its fields carry CLI's tags
// (TestNarrow_TakeSameGrammar).
type takeCLI struct {
	cli.Globals

	Take TakeCmd `cmd:"" default:"withargs" help:"Take a checkpoint (the default verb: git venom-checkpoint [flags] is take [flags])."`
}

// Hints are CLI's (cli.Hinter).
func (c *takeCLI) Hints(e *errcode.Error) { harness.Hints(e) }

// takeValued are the flags of take and the global ones that take a value.
var takeValued = []string{"--agent", "--reason", "--turn", "--label", "--isolation", "--parent", "--color"}

// takeWords reports a take that takeCLI reads as CLI does: flagWords,
// with "take" first or no verb. At the top kong reads the default verb's
// flags, so both grammars read such a list to the same values.
func takeWords(args []string) bool {
	if len(args) > 0 && args[0] == "take" {
		args = args[1:]
	}
	return flagWords(args, takeValued)
}

// flagWords reports words that are only flags and their values, valued
// naming the flags that take one: no word kong might read as a verb, no
// "--", no help, no short flag but -q, no value starting with "-" (the
// whole grammar glues it to its flag: --label --json labels "--json").
// A narrow grammar reads them as the whole one does; on any error in
// them, the whole grammar reads them again, for its message.
func flagWords(args []string, valued []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q":
		case !strings.HasPrefix(a, "--") || a == "--" || a == "--help":
			return false
		case slices.Contains(valued, a) && i+1 < len(args):
			next := args[i+1]
			if strings.HasPrefix(next, "-") {
				return false
			}
			// A bare --color takes the next word only when it is a choice.
			if a != "--color" || cli.IsColorWhen(next) {
				i++
			}
		}
	}
	return true
}

// narrowVerbs are the verbs, named first, that a part of CLI reads: the
// ones without arguments or verbs of their own that the tests and
// scripts run most. Each grammar's fields carry CLI's tags, and valued
// lists its flags that take a value (TestNarrow_VerbsSameGrammar).
var narrowVerbs = map[string]struct {
	grammar func() any
	valued  []string
}{
	"list":   {func() any { return &listCLI{} }, []string{"--agent", "--turn", "--before", "--limit", "--max-count", "--color"}},
	"prune":  {func() any { return &pruneCLI{} }, []string{"--agent", "--keep", "--color"}},
	"clean":  {func() any { return &cleanCLI{} }, []string{"--agent", "--color"}},
	"events": {func() any { return &eventsCLI{} }, []string{"--types", "--resources", "--since", "--color"}},
	"doctor": {func() any { return &doctorCLI{} }, []string{"--color"}},
	"agents": {func() any { return &agentsCLI{} }, []string{"--color"}},
}

type listCLI struct {
	cli.Globals

	List ListCmd `cmd:"" help:"List an agent's checkpoints, newest first."`
}

type pruneCLI struct {
	cli.Globals

	Prune PruneCmd `cmd:"" help:"Delete checkpoints past retention (venom.keep, venom.keepFor, venom.keepSafety)."`
}

type cleanCLI struct {
	cli.Globals

	Clean CleanCmd `cmd:"" help:"Archive an agent and remove its checkpoints."`
}

type eventsCLI struct {
	cli.Globals

	Events EventsCmd `cmd:"" help:"Print the event stream, a line an event (--json: JSON lines)."`
}

type doctorCLI struct {
	cli.Globals

	Doctor DoctorCmd `cmd:"" help:"Check the repository's checkpoints and state."`
}

type agentsCLI struct {
	cli.Globals

	Agents AgentsCmd `cmd:"" help:"List the registered agents."`
}

// Hints are CLI's (cli.Hinter).
func (c *listCLI) Hints(e *errcode.Error)   { harness.Hints(e) }
func (c *pruneCLI) Hints(e *errcode.Error)  { harness.Hints(e) }
func (c *cleanCLI) Hints(e *errcode.Error)  { harness.Hints(e) }
func (c *eventsCLI) Hints(e *errcode.Error) { harness.Hints(e) }
func (c *doctorCLI) Hints(e *errcode.Error) { harness.Hints(e) }
func (c *agentsCLI) Hints(e *errcode.Error) { harness.Hints(e) }

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
