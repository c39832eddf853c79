package share

import (
	"context"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
)

// Locals reads, for one command, checkpoints named with a local agent,
// <agent>/<name> (a1/k2, a1/t3, a1/last~1, a1/<label>): the form the
// output names a checkpoint in ("Checkpoint a1/k2"). It reads the agents
// and lists the copies fetched from a remote of an agent's name once for
// the command, and only for a name of that form: k2 or t3 start nothing.
type Locals struct {
	ctx context.Context
	s   *state.Store
	st  *agents.State
	// copied is, by agent, whether copies were fetched from a remote of
	// its name.
	copied map[string]bool
}

// NewLocals reads the command's names in the repository of s.
func NewLocals(ctx context.Context, s *state.Store) *Locals {
	return &Locals{ctx: ctx, s: s, copied: map[string]bool{}}
}

// Split splits a checkpoint named with a local agent. ok is false unless
// the part before the first slash is an agent registered here and no
// remote whose copies were fetched: a name that begins with such a
// remote is a copy's (Qualified), and one whose first part names no
// agent is left whole (a label feature/x, or a path the shell made of
// ~1).
func (l *Locals) Split(given string) (agent, name string, ok bool, err error) {
	if err := l.read(given); err != nil {
		return "", "", false, err
	}
	first, rest := splitAgent(given)
	if first == "" || l.st.Agents[first] == nil || l.copied[first] {
		return "", "", false, nil
	}
	return first, rest, true, nil
}

// Pair reads a name and its partner as one agent's, as a diff's two
// checkpoints or a revert's pair are: each may be named with a local
// agent (Split); when both are, it must be the same one. It returns that
// agent ("" when neither names one) and the two names without it.
func (l *Locals) Pair(a, b string) (agent, aName, bName string, err error) {
	if err := l.read(a, b); err != nil {
		return "", "", "", err
	}
	aName, bName = a, b
	for _, n := range []*string{&aName, &bName} {
		id, rest, ok, err := l.Split(*n)
		if err != nil {
			return "", "", "", err
		}
		if !ok {
			continue
		}
		if agent != "" && id != agent {
			return "", "", "", errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": []string{a, b}},
				"%s and %s are two agents' checkpoints: name one agent's", quote.C(a), quote.C(b))
		}
		agent, *n = id, rest
	}
	return agent, aName, bName, nil
}

// read learns what the first parts of names of the <agent>/<name> form
// are: the agents once, then, in one git for-each-ref, whether copies
// were fetched from remotes of the names not asked about yet.
func (l *Locals) read(names ...string) error {
	var ask []string
	for _, n := range names {
		first, _ := splitAgent(n)
		if first == "" {
			continue
		}
		if l.st == nil {
			st, err := l.s.ReadStubs()
			if err != nil {
				return err
			}
			l.st = st
		}
		if _, known := l.copied[first]; known || l.st.Agents[first] == nil {
			continue
		}
		if CheckRemote(first) != nil {
			l.copied[first] = false // no copy can be under it
		} else if !slices.Contains(ask, first) {
			ask = append(ask, first)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	copies, err := copiesOf(l.ctx, l.s, ask)
	if err != nil {
		return err
	}
	for _, first := range ask {
		l.copied[first] = false
	}
	for _, id := range copies {
		r, _, _ := Parts(id)
		l.copied[r] = true
	}
	return nil
}

// splitAgent splits a name of the <agent>/<name> form; first is "" for a
// name of another form.
func splitAgent(given string) (first, rest string) {
	first, rest, found := strings.Cut(given, "/")
	if !found || rest == "" || !ids.ValidAgent(first) {
		return "", ""
	}
	return first, rest
}

// LocalAgrees checks that an --agent value leaves a checkpoint named with
// agent (Split) to that agent: left out, filled by VENOM_AGENT (the name
// given says more than the environment does), or naming the same agent.
// what is the names as given, for the error.
func LocalAgrees(flag, venomAgent, agent, what string) error {
	if flag == "" || flag == venomAgent || flag == agent {
		return nil
	}
	return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": []string{what, "--agent=" + flag}},
		"%s is a checkpoint of %s, not of --agent=%s", quote.C(what), agent, flag).
		Hint("leave out --agent, or name the checkpoint without %s/", agent)
}
