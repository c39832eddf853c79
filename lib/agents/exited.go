package agents

import "context"

// ExitedTurn is the agent's open turn when the harness process that runs
// it (recorded at its turn_start) has exited: a turn that can never
// report its end (Claude Code kills StopFailure hooks when `claude -p`
// exits; Codex has no hook for a failed turn). A turn with no process
// recorded is never taken for exited. A harness whose own record says the
// turn is over (Record.Over) has ended it too, although its process runs on.
func (a *Agent) ExitedTurn() *Turn {
	t := a.OpenTurn
	switch {
	case t == nil:
		return nil
	case t.Process.PID != 0 && !t.Process.Alive():
		return t
	case records[a.Harness].Over != nil && records[a.Harness].Over(t):
		return t
	}
	return nil
}

// Record is a harness's own record of its turns (its transcript or
// rollout), read for a turn that no hook ended.
type Record struct {
	// Over reports that the record says the turn is over (Codex's rollout:
	// the turn completed or failed); nil: only an exited process says so.
	Over func(*Turn) bool
	// End reads the turn's end from the record: the entry a rewind anchors
	// to and the harness's version, "" where it cannot tell; nil: none.
	End func(ctx context.Context, getenv func(string) string, tree string, t *Turn) (anchor, version string)
}

var records = map[string]Record{}

// RegisterRecord installs a harness's reading of its own record
// (harness.Use, called by each command when its grammar is built).
func RegisterRecord(harness string, r Record) { records[harness] = r }

// RecordOf is the harness's reading of its own record, zero when none.
func RecordOf(harness string) Record { return records[harness] }
