package share

import (
	"context"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
)

// Named reads an --agent value: a local agent as given, or a fetched copy
// as a person names it, <remote>/<machine>/<agent> or, when one machine's
// agent of that name came from the remote, <remote>/<agent>. The result
// is the copy's full id (IsCopy), so that the rest reads one form.
func Named(ctx context.Context, s *state.Store, given string) (string, error) {
	switch strings.Count(given, "/") {
	case 0:
		return given, nil
	case 2:
		return given, nil // ReadCopy says whether it is there
	case 1:
	default:
		return "", notACopy(given)
	}
	remote, agent, _ := strings.Cut(given, "/")
	if CheckRemote(remote) != nil || !ids.ValidAgent(agent) {
		return "", notACopy(given)
	}
	all, err := Copies(ctx, s)
	if err != nil {
		return "", err
	}
	var found []string
	for _, id := range all {
		r, _, a := Parts(id)
		if r == remote && a == agent {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return "", errcode.Newf(errcode.NotFoundAgent, map[string]string{"agent": given},
			"no fetched copy %s here", given).
			Hint("git venom-checkpoint fetch %s   brings the copies it holds", remote)
	case 1:
		return found[0], nil
	}
	e := errcode.Newf(errcode.InvalidParamsAgent, map[string]any{"agent": given, "agents": found},
		"%s names %d fetched copies: agents of that name on %d machines", given, len(found), len(found))
	for _, id := range found {
		e = e.Hint("--agent=%s", id)
	}
	return "", e
}

// Qualified splits a checkpoint named with its copy, <copy>/<checkpoint>
// (origin/a1/k3, origin/<machine>/a1/last~1, origin/a1/<label>), into
// the copy's full id and the checkpoint's own name. ok is false for a
// name of no copy's shape (k3, or /tmp that the shell made of ~1): the
// caller reads it as a checkpoint of the agent --agent names. After a
// copy's id, a name of no other form is the copy's label when that copy
// was fetched, else the whole is a local label (feature/x/wip).
func Qualified(ctx context.Context, s *state.Store, given string) (copyID, name string, ok bool, err error) {
	i := strings.LastIndexByte(given, '/')
	if i < 0 {
		return "", "", false, nil
	}
	name = given[i+1:]
	if !strings.Contains(given[:i], "/") || strings.HasPrefix(given, "/") {
		// Not a copy's name: a path the shell made of ~1, say; the
		// caller's own error says what it is.
		return "", "", false, nil
	}
	copyID, err = Named(ctx, s, given[:i])
	if _, perr := ids.ParseName(name); perr != nil && (err != nil || name == "" || !fetched(ctx, s, copyID)) {
		return "", "", false, nil
	}
	return copyID, name, true, err
}

// fetched reports whether copyID is a copy fetch brought here.
func fetched(ctx context.Context, s *state.Store, copyID string) bool {
	all, err := Copies(ctx, s)
	return err == nil && slices.Contains(all, copyID)
}

// SameCopy reports whether an --agent value leaves a checkpoint named with
// copy copyID (Qualified) to that copy: left out, filled by VENOM_AGENT
// (which then names the local agent, as --into would), or naming the
// same copy.
func SameCopy(ctx context.Context, s *state.Store, agent, venomAgent, copyID string) bool {
	if agent == "" || agent == venomAgent {
		return true
	}
	given, err := Named(ctx, s, agent)
	return err == nil && given == copyID
}

func notACopy(given string) error {
	return errcode.Newf(errcode.NotFoundAgent, map[string]string{"agent": given},
		"%s names no agent and no fetched copy: a copy is <remote>/<agent> or <remote>/<machine>/<agent>", quote.C(given)).
		Hint("git venom-checkpoint fetch <remote>   names each copy it brings")
}
