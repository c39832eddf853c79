package cli

import (
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// completeVerb is the hidden first argument the shell completions pass:
// `git-venom-checkpoint __complete <word>... <current>` prints, one a
// line, the words that can stand where <current> is and start with it.
// The scripts in completion/ (bash, zsh, fish) hand it what the person
// typed after the command's name, so the grammar is read from the binary
// itself and cannot drift.
const completeVerb = "__complete"

// ArgValuer is a grammar that knows the values of a positional argument
// no enum lists (hook install <harness>, from the harness registry).
type ArgValuer interface {
	ArgValues(name string) []string
}

// complete prints the candidates for the last of words.
func complete(env *Env, parser *kong.Kong, grammar any, words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	valuer, _ := grammar.(ArgValuer)
	for _, c := range candidates(env, parser.Model, valuer, words[:len(words)-1], words[len(words)-1]) {
		env.UI.Printf("%s\n", c)
	}
	return 0
}

// candidates reads typed as kong would, far enough to know the verb and
// whether the current word is a verb, a flag or a flag's value.
func candidates(env *Env, app *kong.Application, valuer ArgValuer, typed []string, cur string) []string {
	root := app.Node
	node := root
	verbChosen := false
	flags := append([]*kong.Flag{}, node.Flags...)
	var pending *kong.Flag // a flag whose value is the next word
	agent := ""            // --agent as typed, for the checkpoints offered
	positionals := 0       // positional words typed after the verb
	for _, w := range typed {
		switch {
		case pending != nil:
			if pending.Name == "agent" {
				agent = w
			}
			pending = nil
		case w == "--":
			return nil // paths follow; the shell completes them itself
		case strings.HasPrefix(w, "-"):
			f := flagNamed(flags, node, verbChosen, w)
			if f != nil && !strings.Contains(w, "=") && !f.IsBool() && !f.IsCounter() {
				pending = f
			}
			if f != nil && f.Name == "agent" && strings.Contains(w, "=") {
				_, agent, _ = strings.Cut(w, "=")
			}
		default:
			if c := child(node, w); c != nil {
				node, verbChosen = c, true
				flags = append(flags, c.Flags...)
			} else {
				positionals++
			}
		}
	}
	var out []string
	switch {
	case pending != nil:
		out = values(env, pending, "", agent)
	case strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		name, _, _ := strings.Cut(cur, "=")
		if f := flagNamed(flags, node, verbChosen, name); f != nil {
			out = values(env, f, name+"=", agent)
		}
	case strings.HasPrefix(cur, "-"):
		if !verbChosen && node.DefaultCmd != nil && node.DefaultCmd.Tag.Default == "withargs" {
			flags = append(flags, node.DefaultCmd.Flags...)
		}
		for _, f := range flags {
			if f.Hidden {
				continue
			}
			if f.IsBool() || f.IsCounter() {
				out = append(out, "--"+f.Name)
			} else {
				out = append(out, "--"+f.Name+"=")
			}
		}
		sort.Strings(out)
	case node.Type == kong.CommandNode && node.Name == "help" && node.Parent == root:
		out = verbs(root) // help <verb>
	default:
		out = verbs(node)
		for _, p := range node.Positional {
			switch {
			case p.Enum != "":
				out = append(out, p.EnumSlice()...)
			case p.Tag.Get("complete") == "checkpoint" && positionals < maxCheckpointArgs(p):
				out = append(out, checkpointNames(env, agent)...)
			case valuer != nil:
				out = append(out, valuer.ArgValues(p.Name)...)
			}
		}
	}
	var match []string
	for _, c := range out {
		if strings.HasPrefix(c, cur) {
			match = append(match, c)
		}
	}
	return match
}

// flagNamed finds --name (or --name=value, or -x) among the flags in scope,
// which at the top of a grammar with a default verb include that verb's.
func flagNamed(flags []*kong.Flag, node *kong.Node, verbChosen bool, word string) *kong.Flag {
	if !verbChosen && node.DefaultCmd != nil {
		flags = append(flags, node.DefaultCmd.Flags...)
	}
	name, _, _ := strings.Cut(strings.TrimLeft(word, "-"), "=")
	for _, f := range flags {
		if f.Name == name || (len(word) == 2 && word[0] == '-' && f.Short != 0 && string(f.Short) == name) {
			return f
		}
	}
	return nil
}

// values are the words a flag's value can be, each after prefix: its
// enum's choices, the registered agents for an agent id, or the checkpoints
// of agent (as typed; "" for the default one) for a checkpoint.
func values(env *Env, f *kong.Flag, prefix, agent string) []string {
	var vs []string
	switch {
	case f.Enum != "":
		for _, v := range f.EnumSlice() {
			if v != "" {
				vs = append(vs, v)
			}
		}
	case f.Name == "agent" || f.Name == "parent":
		vs = agentIDs(env)
	case f.Tag.Get("complete") == "checkpoint":
		vs = checkpointNames(env, agent)
	}
	for i := range vs {
		vs[i] = prefix + vs[i]
	}
	return vs
}

// agentIDs lists the repository's agents, or none outside a repository.
func agentIDs(env *Env) []string {
	_, st, err := env.Read()
	if err != nil {
		return nil
	}
	var ids []string
	for _, a := range st.Active() {
		ids = append(ids, a.ID)
	}
	return ids
}

// maxCheckpointArgs is how many checkpoints a positional tagged
// complete:"checkpoint" takes before the rest are other words: its
// complete-max tag (diff takes two), else one.
func maxCheckpointArgs(p *kong.Positional) int {
	if n, err := p.Tag.GetInt("complete-max"); err == nil && n > 0 {
		return int(n)
	}
	return 1
}

// checkpointNames are the names a checkpoint can be given by for agent
// (as typed with --agent; "" for the default one): its live checkpoints,
// newest first, then last; none when no agent can be told.
func checkpointNames(env *Env, agent string) []string {
	_, st, err := env.Read()
	if err != nil {
		return nil
	}
	a, err := st.Named(agent)
	if err != nil {
		return nil
	}
	var names []string
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		if a.Checkpoints[i].Live() {
			names = append(names, a.Checkpoints[i].Checkpoint)
		}
	}
	if len(names) > 0 {
		names = append(names, "last")
	}
	return names
}
