package agents

// ExitedTurn is the agent's open turn when the harness process that runs
// it (recorded at its turn_start) has exited: a turn that can never
// report its end (issue 13: Claude Code kills StopFailure hooks when
// `claude -p` exits; Codex has no hook for a failed turn). A turn with no
// process recorded is never taken for exited.
func (a *Agent) ExitedTurn() *Turn {
	t := a.OpenTurn
	if t == nil || t.Process.PID == 0 || t.Process.Alive() {
		return nil
	}
	return t
}
