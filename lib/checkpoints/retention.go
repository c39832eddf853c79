package checkpoints

import (
	"context"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/retention"
	"github.com/git-venom/git-venom/lib/state"
)

// afterCapture runs what follows a successful capture in the same
// transaction: pruning after a turn_end (docs/checkpoints.md#retention-and-clean), then the merge of
// git-venom's packs when they pile up.
func afterCapture(ctx context.Context, tx *state.Txn, a *agents.Agent, req Request) {
	if req.Reason == TurnEnd {
		retention.AfterTurnEnd(ctx, tx, a.ID)
	}
	maintainPacks(tx)
}
