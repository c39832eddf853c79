// Package caller tells a person from an agent running a command (CONTRACT
// 3, 8.10). It is a guard against accidents, not a security boundary.
package caller

// Caller is who runs the command.
type Caller struct {
	Agent bool   // an agent's shell, or VENOM_CALLER=agent
	ID    string // VENOM_AGENT, when set
}

// Detect reads the environment through getenv. VENOM_CALLER=person|agent
// overrides; otherwise CLAUDECODE=1, or a non-empty CODEX_THREAD_ID,
// CODEX_SANDBOX or CODEX_SANDBOX_NETWORK_DISABLED, means an agent.
func Detect(getenv func(string) string) Caller {
	c := Caller{ID: getenv("VENOM_AGENT")}
	switch getenv("VENOM_CALLER") {
	case "person":
		return c
	case "agent":
		c.Agent = true
		return c
	}
	c.Agent = getenv("CLAUDECODE") == "1" || getenv("CODEX_THREAD_ID") != "" ||
		getenv("CODEX_SANDBOX") != "" || getenv("CODEX_SANDBOX_NETWORK_DISABLED") != ""
	return c
}
