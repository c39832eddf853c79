package cli

import (
	"os/exec"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// wantsManual reports --help among the arguments before "--": as git's
// `git <command> --help`, it opens the command's manual, for every verb
// (git venom-checkpoint list --help opens git-venom-checkpoint(1)); -h
// and the help verb print the short usage. A flag's value is not a
// request: git commit -m --help commits with the message "--help".
func wantsManual(parser *kong.Kong, args []string) bool {
	values := flagValues(parser, args)
	for i, a := range args {
		if a == "--" {
			return false
		}
		if a == "--help" && values[i] == nil {
			return true
		}
	}
	return false
}

// flagValues gives, for each word that is the value of the flag before
// it, that flag, as git's parse-options reads a flag that needs a value:
// the next word, whatever it is (--label --help labels "--help"). A bare
// --color takes the next word only when it is one of its choices.
func flagValues(parser *kong.Kong, args []string) []*kong.Flag {
	values := make([]*kong.Flag, len(args))
	node := parser.Model.Node
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			if c := child(node, a); c != nil {
				node = c
			}
			continue
		}
		f := flagAt(node, a)
		if f == nil || f.IsBool() || f.IsCounter() || i+1 == len(args) {
			continue
		}
		if f.Name == "color" && !slices.Contains(f.EnumSlice(), args[i+1]) {
			continue
		}
		values[i+1] = f
		i++
	}
	return values
}

// flagAt is the flag that word (--name or -x, without a value) names
// at node: its own, its parents', or, before any verb, the default
// verb's (git venom-checkpoint --label L is take's --label).
func flagAt(node *kong.Node, word string) *kong.Flag {
	var nodes []*kong.Node
	for n := node; n != nil; n = n.Parent {
		nodes = append(nodes, n)
	}
	if node.DefaultCmd != nil {
		nodes = append(nodes, node.DefaultCmd)
	}
	long, isLong := strings.CutPrefix(word, "--")
	for _, n := range nodes {
		for _, f := range n.Flags {
			switch {
			case isLong && (long == f.Name || slices.Contains(f.Aliases, long)):
				return f
			case !isLong && f.Short != 0 && word == "-"+string(f.Short):
				return f
			}
		}
	}
	return nil
}

// glueValues writes each flag value that starts with a dash into its
// flag's word (--label --help becomes --label=--help), which kong would
// otherwise read as a flag of its own.
func glueValues(parser *kong.Kong, args []string) []string {
	values := flagValues(parser, args)
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if i+1 < len(args) && values[i+1] != nil && strings.HasPrefix(args[i+1], "-") {
			out = append(out, "--"+values[i+1].Name+"="+args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// showManual opens the command's manual as git does, through `git help`
// (help.format, man.viewer, the pager, plain text when piped), and
// reports false, having printed nothing, when it cannot: no man program
// or no page installed. The caller then prints the usage text instead.
func showManual(env *Env) bool {
	page := "git-" + strings.TrimPrefix(env.Name, "git-")
	man, err := exec.LookPath("man")
	if err != nil {
		return false
	}
	where := exec.Command(man, "-w", page)
	where.Env, where.Dir = env.Environ, env.Dir
	if where.Run() != nil {
		return false
	}
	help := exec.Command("git", "help", strings.TrimPrefix(page, "git-"))
	help.Env, help.Dir = env.Environ, env.Dir
	help.Stdin, help.Stdout, help.Stderr = env.UI.In, env.UI.Out, env.UI.Err
	return help.Run() == nil
}

// shortHelp is args with --help read as -h, the usage text.
func shortHelp(parser *kong.Kong, args []string) []string {
	values := flagValues(parser, args)
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "--" {
			break
		}
		if a == "--help" && values[i] == nil {
			out[i] = "-h"
		}
	}
	return out
}
