package agents

// ExitedTurn is the agent's open turn when the harness process that runs
// it (recorded at its turn_start) has exited: a turn that can never
// report its end (issue 13: Claude Code kills StopFailure hooks when
// `claude -p` exits; Codex has no hook for a failed turn). A turn with no
// process recorded is never taken for exited.
// A harness whose own record says the turn is over (RegisterTurnOver) has
// ended it too, although its process runs on.
func (a *Agent) ExitedTurn() *Turn {
	t := a.OpenTurn
	switch {
	case t == nil:
		return nil
	case t.Process.PID != 0 && !t.Process.Alive():
		return t
	case turnOver[a.Harness] != nil && turnOver[a.Harness](t):
		return t
	}
	return nil
}

var turnOver = map[string]func(*Turn) bool{}

// RegisterTurnOver installs a harness's reading of its own record of a
// turn (Codex: its rollout says the turn completed or failed).
func RegisterTurnOver(harness string, over func(*Turn) bool) { turnOver[harness] = over }
