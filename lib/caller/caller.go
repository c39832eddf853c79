// Package caller tells a person from an agent running a command
// (docs/checkpoints.md#agents-turns-and-states, docs/harness.md#callers). It is a guard against accidents, not a security boundary.
package caller

// Caller is who runs the command.
type Caller struct {
	Agent bool   // an agent's shell, or VENOM_CALLER=agent
	ID    string // VENOM_AGENT, when set
}

// shells recognise a harness's shell by the variables the harness sets in
// the commands it runs (harness.Kinds registers one per harness).
var shells []func(getenv func(string) string) bool

// RegisterShell adds a harness's test of its shell's environment.
func RegisterShell(is func(getenv func(string) string) bool) { shells = append(shells, is) }

// Detect reads the environment through getenv. VENOM_CALLER=person|agent
// overrides; otherwise a harness's marks (CLAUDECODE=1, CODEX_THREAD_ID,
// GEMINI_CLI=1, ...) mean an agent.
func Detect(getenv func(string) string) Caller {
	c := Caller{ID: getenv("VENOM_AGENT")}
	switch getenv("VENOM_CALLER") {
	case "person":
		return c
	case "agent":
		c.Agent = true
		return c
	}
	for _, is := range shells {
		if is(getenv) {
			c.Agent = true
			break
		}
	}
	return c
}
