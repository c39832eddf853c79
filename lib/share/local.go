package share

import (
	"context"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
)

// Local splits a checkpoint named with a local agent, <agent>/<name>
// (a1/k2, a1/t3, a1/last~1, a1/<label>): the form the output names a
// checkpoint in ("Checkpoint a1/k2"). ok is false unless the part before
// the first slash is an agent registered here and no remote whose copies
// were fetched: a name that begins with such a remote is a copy's
// (Qualified), and one whose first part names no agent is left whole (a
// label feature/x, or a path the shell made of ~1).
func Local(ctx context.Context, s *state.Store, given string) (agent, name string, ok bool, err error) {
	first, rest, found := strings.Cut(given, "/")
	if !found || rest == "" || !ids.ValidAgent(first) {
		return "", "", false, nil
	}
	st, err := s.ReadStubs()
	if err != nil {
		return "", "", false, err
	}
	if st.Agents[first] == nil {
		return "", "", false, nil
	}
	copies, err := Copies(ctx, s)
	if err != nil {
		return "", "", false, err
	}
	for _, id := range copies {
		if r, _, _ := Parts(id); r == first {
			return "", "", false, nil
		}
	}
	return first, rest, true, nil
}

// LocalAgrees checks that an --agent value leaves a checkpoint named with
// agent (Local) to that agent: left out, filled by VENOM_AGENT (the name
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

// LocalPair reads a name and its partner as one agent's, as a diff's two
// checkpoints or a revert's pair are: each may be named with a local
// agent (Local); when both are, it must be the same one. It returns that
// agent ("" when neither names one) and the two names without it.
func LocalPair(ctx context.Context, s *state.Store, a, b string) (agent, aName, bName string, err error) {
	aName, bName = a, b
	for _, n := range []*string{&aName, &bName} {
		if *n == "" {
			continue
		}
		id, rest, ok, err := Local(ctx, s, *n)
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
