package checkpoints

import (
	"context"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
)

// TreeOf opens the agent's tree; the caller frees it unless it is s.Repo.
func TreeOf(ctx context.Context, s *state.Store, a *agents.Agent) (*repo.Repo, error) {
	return treeOf(ctx, s, a)
}
