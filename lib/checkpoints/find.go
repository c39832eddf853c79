package checkpoints

import (
	"context"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
)

// Find returns the agent's checkpoint id when it still counts: logged, not
// pruned or removed, and its ref in r still holding the logged commit (RFC
// 4.2). Anything else is not_found.checkpoint; a malformed id is
// invalid_params.checkpoint.
func Find(r *repo.Repo, a *agents.Agent, id string) (*agents.Checkpoint, error) {
	n, err := ids.ParseCheckpoint(id)
	if err != nil {
		return nil, errcode.Newf(errcode.InvalidParamsCheckpoint, map[string]string{"checkpoint": id}, "%v", err)
	}
	c := a.Checkpoint(id)
	if c == nil || !c.Live() || len(c.Repos) == 0 {
		why := "never existed"
		if c != nil {
			why = "was pruned or removed"
		}
		return nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": id},
			"checkpoint %s/%s %s", a.ID, id, why).Hint("git venom-checkpoint list shows the checkpoints")
	}
	for _, rs := range c.Repos {
		want, err := git.NewOid(rs.Commit)
		got, rerr := refs.Resolve(r, a.ID, n)
		if err != nil || rerr != nil || got == nil || !got.Equal(want) {
			return nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": id, "repo": rs.Repo},
				"the ref of checkpoint %s/%s is gone or no longer holds the logged commit", a.ID, id).
				Hint("git venom-checkpoint doctor reports such refs")
		}
	}
	return c, nil
}

// TreeOf opens the agent's tree (the caller frees it unless it is s.Repo).
func TreeOf(ctx context.Context, s *state.Store, a *agents.Agent) (*repo.Repo, error) {
	return treeOf(ctx, s, a)
}
