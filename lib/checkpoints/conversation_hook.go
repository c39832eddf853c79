package checkpoints

import (
	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
)

func init() {
	RewindCapable = func(a *agents.Agent, t *agents.Turn) bool { return conversation.CanRewind(a, t) }
}
