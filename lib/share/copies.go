package share

import (
	"context"
	"sort"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
)

// Copies lists the ids of the fetched copies here (<remote>/<machine>/<agent>),
// sorted: one a log ref under refs/venom/remotes/ that fetch could have
// written. Whether each passes its checks is ReadCopy's to say.
func Copies(ctx context.Context, s *state.Store) ([]string, error) {
	return copiesOf(ctx, s, nil)
}

// copiesOf is Copies of the remotes named (every remote's when none is).
func copiesOf(ctx context.Context, s *state.Store, remotes []string) ([]string, error) {
	args := []string{"for-each-ref", "--format=%(refname)"}
	if len(remotes) == 0 {
		args = append(args, LocalPrefix)
	}
	for _, r := range remotes {
		args = append(args, LocalPrefix+r+"/")
	}
	out, err := s.Repo.Git.Run(ctx, args...)
	if err != nil {
		return nil, errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "for_each_ref"},
			"cannot list the fetched copies").Wrap(err)
	}
	var list []string
	for _, name := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		rest := strings.TrimPrefix(name, LocalPrefix)
		remote, shared, ok := strings.Cut(rest, "/")
		if !ok || CheckRemote(remote) != nil {
			continue
		}
		if r, ok := parseShared(shared); ok && r.n == 0 {
			list = append(list, CopyID(remote, r.machine, r.agent))
		}
	}
	sort.Strings(list)
	return list, nil
}

// Parts splits a copy id into its remote, machine and agent.
func Parts(copyID string) (remote, machine, agent string) {
	p := strings.SplitN(copyID, "/", 3)
	if len(p) != 3 {
		return "", "", ""
	}
	return p[0], p[1], p[2]
}

// Checks of a copy's checkpoint at the time of use.
const (
	// CheckRef: the ref holds the logged commit, and the commit's
	// trailers name the copy's agent and checkpoint.
	CheckRef = iota
	// CheckPaths: CheckRef, and every path of the tree is one git would
	// check out (treepath rules), within the venom.copyMax* budgets, as
	// fetch checked it.
	CheckPaths
)

// Check re-checks checkpoint c of fetched copy a (ReadCopy's agent) as
// fetch checked it, now: the refs under refs/venom/remotes/ are as
// writable as any, and a later fetch or a hand-made update-ref may have
// put another commit there since. Nothing the log copy says about a
// commit or tree is taken on trust. The error is failed.copy_checks with
// fetch's refusal reason.
func Check(s *state.Store, a *agents.Agent, c *agents.Checkpoint, level int) error {
	why, over := check(s, a, c, level)
	if why == "" {
		return nil
	}
	if over != nil {
		return budgetError(a.ID, c.Checkpoint, over)
	}
	return errcode.Newf(errcode.FailedCopyChecks, map[string]string{"agent": a.ID, "checkpoint": c.Checkpoint, "reason": why},
		"checkpoint %s of the fetched copy %s does not pass the checks (%s); nothing was changed", c.Checkpoint, a.ID, why).
		Hint("git venom-checkpoint fetch %s   fetches the copy again, checked", strings.SplitN(a.ID, "/", 2)[0])
}

func check(s *state.Store, a *agents.Agent, c *agents.Checkpoint, level int) (string, *Over) {
	_, _, agent := Parts(a.ID)
	if len(c.Repos) != 1 {
		return RefusedUnlogged, nil
	}
	held, err := refs.Resolve(s.Repo, a.ID, c.N)
	if err != nil || held == nil {
		return RefusedMissing, nil
	}
	if held.String() != c.Repos[0].Commit {
		return RefusedUnlogged, nil
	}
	info, err := refs.ReadCommit(s.Repo, held)
	if err != nil {
		return RefusedMissing, nil
	}
	if !checkpoints.Trailers(info, agent, ids.Checkpoint(c.N)) {
		return RefusedTrailers, nil
	}
	if level >= CheckPaths {
		w := walk(s.Config)
		defer w.Free()
		return budget(s, w, info.Tree)
	}
	return "", nil
}

// Untrusted marks every checkpoint of copy a that fails Check at level
// CheckRef as removed, in this fold only (a is ReadCopy's, private to the
// command), so that what reads the fold passes it over as it passes a
// pruned one.
func Untrusted(s *state.Store, a *agents.Agent) {
	for _, c := range a.Checkpoints {
		if !c.Live() {
			continue
		}
		if why, _ := check(s, a, c, CheckRef); why != "" {
			c.Removed = true
		}
	}
}
