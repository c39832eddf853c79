package checkpointcmd

import (
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/harness"
)

// readTake reads a take, "take" first or no verb, as kong reads it with
// CLI, for CLI.Read: its flags and the global ones, each at most once,
// with its value after "=" or as the next word, --agent from VENOM_AGENT
// when not given, as kong reads it (os.LookupEnv). Anything else, a
// value outside its choices or one that starts with "-" included, it
// leaves to kong, for kong's values or its errors (TestRead_TakeAsKong).
func readTake(args []string) (cmd TakeCmd, g cli.Globals, ok bool) {
	if len(args) > 0 && args[0] == "take" {
		args = args[1:]
	}
	g.Color, cmd.Reason = tagOf[cli.Globals]("Color", "default"), tagOf[TakeCmd]("Reason", "default")
	cmd.Agent = os.Getenv("VENOM_AGENT")
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if a == "-q" {
			name = "--quiet"
		}
		if seen[name] {
			return cmd, g, false
		}
		seen[name] = true
		var to *string
		enum := "" // the value's choices, from the field's tag
		switch name {
		case "--json", "--quiet", "--no-pager":
			if hasValue {
				return cmd, g, false
			}
			switch name {
			case "--json":
				g.JSON = true
			case "--quiet":
				g.Quiet = true
			default:
				g.NoPager = true
			}
			continue
		case "--agent":
			to = &cmd.Agent
		case "--reason":
			to, enum = &cmd.Reason, tagOf[TakeCmd]("Reason", "enum")
		case "--turn":
			to = &cmd.Turn
		case "--label":
			cmd.Label = new(string)
			to = cmd.Label
		case "--isolation":
			to, enum = &cmd.Isolation, tagOf[TakeCmd]("Isolation", "enum")
		case "--parent":
			to = &cmd.Parent
		case "--color":
			to, enum = &g.Color, tagOf[cli.Globals]("Color", "enum")
		default:
			return cmd, g, false
		}
		if !hasValue {
			if i+1 == len(args) || args[i+1] == "" || strings.HasPrefix(args[i+1], "-") {
				return cmd, g, false
			}
			i++
			value = args[i]
		}
		if enum != "" && !slices.Contains(strings.Split(enum, ","), value) {
			return cmd, g, false
		}
		*to = value
	}
	return cmd, g, true
}

// tagOf is the tag key of T's field: the defaults and choices readTake
// keeps are the grammar's own, as kong reads them.
func tagOf[T any](field, key string) string {
	f, _ := reflect.TypeFor[T]().FieldByName(field)
	return f.Tag.Get(key)
}

// runHinted runs the take, its errors' hints naming the harnesses as
// CLI's (cli.Hinter) do when kong runs it.
func (c *TakeCmd) runHinted(env *cli.Env) error {
	err := c.Run(env)
	if e, ok := errcode.As(err); ok {
		harness.Hints(e)
	}
	return err
}
