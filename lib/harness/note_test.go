package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/journal"
)

// TestNoteText_FetchedCopy: the note of a rollback to a fetched copy's
// checkpoint names the copy, never a turn of the local agent that happens
// to hold a checkpoint of the same id.
func TestNoteText_FetchedCopy(t *testing.T) {
	t1 := "t1"
	st := agents.Fold([]journal.Entry{
		{Seq: 1, Type: journal.AgentRegistered, Agent: "me", Tree: "/repo", Isolation: "in_place", Harness: "none"},
		{Seq: 2, Type: journal.CheckpointTaken, Agent: "me", Checkpoint: "k3", Reason: "manual", ThroughTurn: &t1,
			Repos: []journal.RepoState{{Repo: ".", Commit: strings.Repeat("a", 40)}}},
	})
	e := &journal.Entry{Type: journal.RollbackEnded, Agent: "me", Checkpoint: "k3", Restore: "files",
		Copy: "origin/0b0c0d0e-0000-4000-8000-000000000000/a1"}
	got := NoteText("rolled back to their state {when}.", st, "me", e)
	assert.Equal(t, "rolled back to their state of checkpoint k3 of the fetched copy "+
		"origin/0b0c0d0e-0000-4000-8000-000000000000/a1 (another machine's agent).", got)
	e.Copy = ""
	assert.Equal(t, "rolled back to their state after turn t1.", NoteText("rolled back to their state {when}.", st, "me", e))
}

// TestNoteText_Revert: a revert's note names the turn taken back and says
// the later changes stay, for the agent and for a sharer; never the
// rollback note's "rolled back to their state", which would say the later
// turns are gone.
func TestNoteText_Revert(t *testing.T) {
	st := agents.Fold(nil)
	e := &journal.Entry{Type: journal.RollbackEnded, Agent: "a1", Checkpoint: "k6", Restore: "files", Revert: "t3"}
	got := NoteText("rolled back to their state {when}.", st, "a1", e)
	assert.Contains(t, got, "the changes your turn t3 made to the files were reverted")
	assert.Contains(t, got, "every change made after it is kept")
	assert.NotContains(t, got, "rolled back to their state")
	assert.Contains(t, NoteText("{when}", st, "b2", e), "the changes agent a1's turn t3 made")
	e.Revert, e.Paths = "k5..k6", []string{"src/a.go"}
	got = NoteText("{when}", st, "a1", e)
	assert.Contains(t, got, "between your checkpoints k5 and k6")
	assert.Contains(t, got, "Only these paths were reverted: src/a.go.")
}
