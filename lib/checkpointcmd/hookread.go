package checkpointcmd

import (
	"strings"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/harness"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// Read reads `hook <harness> ...` as kong reads it, without kong
// (cli.Reader): the words hook install writes (--agent=, --isolation=,
// --per-tool), Codex's payload appended as the last word, the global
// flags, and the same with a value as the next word. Anything else, a
// word given twice, a value outside its choices or one that starts with
// "-" included, it leaves to kong, for kong's values or kong's errors
// (TestRead_AsKongReadsIt). So for a take (readTake).
func (c *CLI) Read(args []string) (run func(*cli.Env) error, globals *cli.Globals, ok bool) {
	if take, g, ok := readTake(args); ok {
		return take.runHinted, &g, true
	}
	cmd, g, k, ok := readHook(args)
	if !ok {
		return nil, nil, false
	}
	return func(env *cli.Env) error { return cmd.run(env, k) }, &g, true
}

// readHook is Read's reading: the verb's flags and payload, the global
// flags, the harness.
func readHook(args []string) (cmd HookRunCmd, g cli.Globals, k *kind.Kind, ok bool) {
	if len(args) < 2 || args[0] != "hook" {
		return cmd, g, nil, false
	}
	if k = harness.Lookup(args[1]); k == nil {
		return cmd, g, nil, false
	}
	g.Color = "auto"
	seen := map[string]bool{}
	notify := false
	for i := 2; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if notify || a == "" {
				return cmd, g, nil, false
			}
			cmd.Notify, notify = a, true
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		if a == "-q" {
			name = "--quiet"
		}
		if seen[name] {
			return cmd, g, nil, false
		}
		seen[name] = true
		var to *string
		switch name {
		case "--json", "--quiet", "--no-pager", "--per-tool":
			if hasValue {
				return cmd, g, nil, false
			}
			switch name {
			case "--json":
				g.JSON = true
			case "--quiet":
				g.Quiet = true
			case "--no-pager":
				g.NoPager = true
			default:
				cmd.PerTool = true
			}
			continue
		case "--agent":
			to = &cmd.Agent
		case "--parent":
			to = &cmd.Parent
		case "--isolation":
			to = &cmd.Isolation
		case "--color":
			to = &g.Color
		default:
			return cmd, g, nil, false
		}
		if !hasValue {
			if i+1 == len(args) || args[i+1] == "" || strings.HasPrefix(args[i+1], "-") {
				return cmd, g, nil, false
			}
			i++
			value = args[i]
		}
		switch name {
		case "--isolation":
			if value != "" && value != "in_place" && value != "worktree" && value != "copy" {
				return cmd, g, nil, false
			}
		case "--color":
			if value != "auto" && value != "always" && value != "never" {
				return cmd, g, nil, false
			}
		}
		*to = value
	}
	return cmd, g, k, true
}
