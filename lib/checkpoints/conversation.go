package checkpoints

import (
	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
)

// Why a checkpoint cannot bring the conversation back (docs/errors.md#codes
// conflict.checkpoint_files_only data.why); "" when it can.
const (
	WhyMidTurn      = "mid_turn"
	WhyOverlap      = "overlap"
	WhyFork         = "fork"
	WhyDroppedTurn  = "dropped_turn"
	WhyNoHarnessID  = "no_harness_id"
	WhyCatchUpFaild = "catch_up_failed"
)

// WhyWords says in words why checkpoint c cannot bring the conversation
// back, for a hint of at most 80 columns; --json keeps the code
// (data.why).
func WhyWords(c *agents.Checkpoint, why string) string {
	turn := func(p *string, none string) string {
		if p == nil {
			return none
		}
		return "turn " + *p
	}
	switch why {
	case WhyMidTurn:
		return "it was taken inside " + turn(c.Turn, "a turn") + "; no point of the conversation matches it"
	case WhyOverlap:
		return "it was taken as the last turn ended and may hold part of the next"
	case WhyFork:
		return "it is a fork's first checkpoint; the conversation is the source's"
	case WhyDroppedTurn:
		return "an earlier rollback took " + turn(c.ThroughTurn, "its turn") + " out of the conversation"
	case WhyNoHarnessID:
		return "the harness never said where " + turn(c.ThroughTurn, "its turn") + " ends in the conversation"
	case WhyCatchUpFaild:
		return "the conversation could not be brought up to it"
	}
	return why
}

// NoConversation returns why checkpoint c's conversation cannot be brought
// back, or "" when it can (docs/rollback.md#conversation "What decides it").
func NoConversation(a *agents.Agent, c *agents.Checkpoint) string {
	switch {
	case c.MidTurn:
		return WhyMidTurn
	case c.Overlap:
		return WhyOverlap
	case c.Reason == Fork:
		return WhyFork
	}
	if c.ThroughTurn == nil {
		return "" // back to before the first turn: no rewind needed
	}
	t := a.Turn(*c.ThroughTurn)
	if t == nil || t.Dropped {
		return WhyDroppedTurn
	}
	if last := a.LastEndedTurn(); last != nil && last.ID == t.ID {
		return "" // the latest turn: nothing to rewind
	}
	if !conversation.HasHarnessID(a, t) {
		return WhyNoHarnessID
	}
	return ""
}

// Conversation is the list's conversation member: whether the checkpoint
// can bring the conversation back (docs/rollback.md#conversation). An
// agent with no harness has none to bring back: false.
func Conversation(a *agents.Agent, c *agents.Checkpoint) bool {
	if !a.HasConversation() || NoConversation(a, c) != "" {
		return false
	}
	if c.ThroughTurn == nil {
		return true
	}
	if last := a.LastEndedTurn(); last != nil && last.ID == *c.ThroughTurn {
		return true
	}
	return conversation.CanRewind(a, a.Turn(*c.ThroughTurn))
}
