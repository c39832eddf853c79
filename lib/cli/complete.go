package cli

import (
	"sort"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/quote"
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

// completeFiles is complete's exit code where the word is a path (after
// --, or --path's value): the shell completes file names itself there,
// and nowhere else (bash would offer files for --plan= or a checkpoint).
const completeFiles = 3

// complete prints the candidates for the last of words, in the order
// they are to be shown (numbers in number order: k2 before k10).
func complete(env *Env, parser *kong.Kong, grammar any, words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	valuer, _ := grammar.(ArgValuer)
	found, files := candidates(env, parser.Model, valuer, words[:len(words)-1], words[len(words)-1])
	for _, c := range found {
		env.UI.Printf("%s\n", c)
	}
	if files {
		return completeFiles
	}
	return 0
}

// candidates reads typed as kong would, far enough to know the verb and
// whether the current word is a verb, a flag or a flag's value; files
// is true where the word is a path.
func candidates(env *Env, app *kong.Application, valuer ArgValuer, typed []string, cur string) (found []string, files bool) {
	root := app.Node
	node := root
	verbChosen := false
	flags := append([]*kong.Flag{}, node.Flags...)
	var pending *kong.Flag // a flag whose value is the next word
	agent := ""            // --agent as typed, for the checkpoints offered
	from := ""             // fork's --from, whose turns --through-turn takes
	positionals := 0       // positional words typed after the verb
	for _, w := range typed {
		switch {
		case pending != nil:
			switch pending.Name {
			case "agent":
				agent = w
			case "from":
				from = w
			}
			pending = nil
		case w == "--":
			return nil, true // paths follow
		case strings.HasPrefix(w, "-"):
			f := flagNamed(flags, node, verbChosen, w)
			if f != nil && !strings.Contains(w, "=") && !f.IsBool() && !f.IsCounter() {
				pending = f
			}
			if f != nil && strings.Contains(w, "=") {
				switch _, v, _ := strings.Cut(w, "="); f.Name {
				case "agent":
					agent = v
				case "from":
					from = v
				}
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
	if from != "" && agent == "" {
		agent = from
	}
	var out []string
	switch {
	case pending != nil:
		if pending.Tag.Get("complete") == "path" {
			return nil, true
		}
		out = values(env, pending, "", agent)
	case strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		name, _, _ := strings.Cut(cur, "=")
		if f := flagNamed(flags, node, verbChosen, name); f != nil {
			if f.Tag.Get("complete") == "path" {
				return nil, true
			}
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
	for _, c := range out {
		if strings.HasPrefix(c, cur) {
			found = append(found, c)
		}
	}
	return found, false
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
	case f.Name == "agent" || f.Name == "parent" || f.Tag.Get("complete") == "agent":
		vs = agentIDs(env)
	case f.Tag.Get("complete") == "checkpoint":
		vs = checkpointNames(env, agent)
	case f.Tag.Get("complete") == "turn":
		vs = turnNames(env, agent, false)
	case f.Tag.Get("complete") == "whole-turn":
		vs = turnNames(env, agent, true)
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
// (as typed with --agent; "" for the default one): its live checkpoints
// in number order, the turns whose end checkpoint is one of them, last,
// then the labels of its live checkpoints that a shell can take as one
// word (docs/checkpoints.md#labels); none when no agent can be told.
func checkpointNames(env *Env, agent string) []string {
	a := namedAgent(env, agent)
	if a == nil {
		return nil
	}
	var names []string
	live := map[string]bool{}
	for _, c := range a.Checkpoints {
		if c.Live() {
			names = append(names, c.Checkpoint)
			live[c.Checkpoint] = true
		}
	}
	for _, t := range a.Turns {
		if !t.Dropped && t.Ended && live[t.EndCheckpoint] {
			names = append(names, t.ID)
		}
	}
	if len(names) > 0 {
		names = append(names, "last")
	}
	seen := map[string]bool{}
	for _, c := range a.Checkpoints {
		if !c.Live() {
			continue
		}
		for _, l := range c.Labels {
			if _, err := ids.ParseName(l); err != nil && !seen[l] && oneWord(l) {
				seen[l] = true
				names = append(names, l)
			}
		}
	}
	return names
}

// oneWord reports whether a label goes through a shell's completion as
// it is: no space, quote, backslash or control character.
func oneWord(l string) bool {
	return l != "" && !quote.Needs(l) && !strings.ContainsAny(l, " \t'\"$`;&|<>()*?[]{}!#~=:")
}

// turnNames are agent's turns, in number order: those whose checkpoint
// is still there (its end's, or a running turn's start), so that prune
// and clean leave none offered that would fail; with whole, those whose
// start is there too (a revert reads both); those a rollback dropped
// left out.
func turnNames(env *Env, agent string, whole bool) []string {
	a := namedAgent(env, agent)
	if a == nil {
		return nil
	}
	live := func(id string) bool { c := a.Checkpoint(id); return id == "" || c != nil && c.Live() }
	var names []string
	for _, t := range a.Turns {
		switch {
		case t.Dropped:
		case t.Ended && !live(t.EndCheckpoint), t.EndCheckpoint == "" && t.StartCheckpoint == "":
		case !t.Ended && !live(t.StartCheckpoint):
		case whole && (!t.Ended || !live(t.StartCheckpoint)):
		default:
			names = append(names, t.ID)
		}
	}
	return names
}

// namedAgent is agent (as typed; "" for the default one), or nil when
// no agent can be told.
func namedAgent(env *Env, agent string) *agents.Agent {
	_, st, err := env.Read()
	if err != nil {
		return nil
	}
	a, err := st.Named(agent)
	if err != nil {
		return nil
	}
	return a
}
