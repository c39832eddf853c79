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
