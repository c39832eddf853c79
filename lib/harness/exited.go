package harness

import (
	"context"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/environ"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/state"
)

// EndExited ends, as interrupted, the agent's open turn whose harness
// process has exited (agents.ExitedTurn), under the lock in tx: its
// turn_end capture, with the turn's end read from its session's transcript
// as a hook's would be. No hook can do it: Claude Code kills StopFailure
// hooks about 100 ms after `claude -p` exits, and Codex has no hook for a
// failed turn (issue 13). The next hook of the session ends such a turn
// too (SessionStart, UserPromptSubmit); this is for a command that comes
// first, a rollback. A turn whose process runs is left alone.
func EndExited(ctx context.Context, tx *state.Txn, a *agents.Agent) error {
	t := a.ExitedTurn()
	if t == nil {
		return nil
	}
	var end kind.End
	if k := Lookup(a.Harness); k != nil && k.Transcript != nil && k.End != nil && t.Session != "" {
		if path, err := k.Transcript(environ.Getter(tx.Store.Environ), a.Tree, t.Session); err == nil {
			end, _ = k.End(ctx, path, "") // no anchor: the turn still ends
		}
	}
	_, err := checkpoints.TakeIn(ctx, tx, checkpoints.Request{
		Registration: checkpoints.Registration{Agent: a.ID, Harness: a.Harness},
		Reason:       checkpoints.TurnEnd, HarnessTurn: t.HarnessTurn, HarnessSession: t.Session,
		HarnessEnd: end.UUID, HarnessVersion: end.Version})
	return err
}
