package conversation

import "github.com/git-venom/git-venom/lib/agents"

// Fresher is an adapter that can name a new, empty conversation: what a
// restore=all rollback to before the agent's first turn rewinds to, since
// no turn of the old one is kept (docs/rollback.md#conversation).
type Fresher interface {
	Fresh(a *agents.Agent) *Rewound
}

// Fresh is the agent's new empty conversation, or nil when its adapter
// cannot name one before it starts (the next session is then simply new).
func Fresh(a *agents.Agent) *Rewound {
	if f, ok := For(a).(Fresher); ok {
		return f.Fresh(a)
	}
	return nil
}
