package checkpoints

import (
	"context"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/state"
)

// EndExited ends, as interrupted, the agent's open turn whose harness
// process has exited or whose record says it is over (agents.ExitedTurn),
// under the lock in tx: its turn_end capture, the end read from the
// harness's record as a hook's would be. No hook reports such a turn, and
// a rollback may come before the session's next one
// (docs/harness.md#hooks). A turn whose process runs is left alone.
func EndExited(ctx context.Context, tx *state.Txn, a *agents.Agent) error {
	t := a.ExitedTurn()
	if t == nil {
		return nil
	}
	var anchor, version string
	if end := agents.RecordOf(a.Harness).End; end != nil && t.Session != "" {
		anchor, version = end(ctx, gitcli.Getter(tx.Store.Environ), a.Tree, t)
	}
	_, err := TakeIn(ctx, tx, Request{
		Registration: Registration{Agent: a.ID, Harness: a.Harness},
		Reason:       TurnEnd, HarnessTurn: t.HarnessTurn, HarnessSession: t.Session,
		HarnessEnd: anchor, HarnessVersion: version})
	return err
}
