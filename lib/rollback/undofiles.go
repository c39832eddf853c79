package rollback

import (
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/state"
)

// UndoFilesOnly reports whether an undo of the agent's last rollback
// must restore files only (--restore=files) to pass preflight: its
// safety checkpoint cannot bring the conversation back. After a rewind
// the conversation goes on in a new session, and the turns it dropped
// cannot be rewound to; a turn with no end in the transcript cannot be
// either. The same check the undo's preflight makes, on the log as it
// stands; false when it cannot tell (the undo then says why itself).
func UndoFilesOnly(s *state.Store, agent string) bool {
	st, err := s.ReadAgent(agent)
	if err != nil {
		return false
	}
	a, err := st.Known(agent)
	if err != nil || st.Load(a.ID) != nil {
		return false
	}
	id, err := checkpoints.UndoTarget(a)
	if err != nil {
		return false
	}
	c := a.Checkpoint(id)
	if c == nil {
		return false
	}
	e, ok := errcode.As(conversationCheck(a, c))
	return ok && (e.Code == errcode.UnsupportedHarnessCapability || e.Code == errcode.ConflictCheckpointFilesOnly)
}
