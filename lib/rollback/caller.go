package rollback

// Caller is who runs the command: a person, or an agent
// (docs/checkpoints.md#agents-turns-and-states, docs/harness.md#callers).
// It is a guard against accidents, not a security boundary.
type Caller struct {
	Agent bool   // an agent's shell, or VENOM_CALLER=agent
	ID    string // VENOM_AGENT, when set
}

// DetectCaller reads the environment through getenv. VENOM_CALLER=person|agent
// overrides; otherwise a harness's marks (CLAUDECODE=1, CODEX_THREAD_ID,
// GEMINI_CLI=1, ...), which isShell recognises (harness.IsShell), mean
// an agent. isShell is an argument, not a registry, so that no caller can
// leave a harness out.
func DetectCaller(getenv func(string) string, isShell func(getenv func(string) string) bool) Caller {
	c := Caller{ID: getenv("VENOM_AGENT")}
	switch getenv("VENOM_CALLER") {
	case "person":
		return c
	case "agent":
		c.Agent = true
		return c
	}
	c.Agent = isShell(getenv)
	return c
}
