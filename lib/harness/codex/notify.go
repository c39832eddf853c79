package codex

import (
	"encoding/json"
	"fmt"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// turnComplete is the notify program's one event, and the hook event it
// becomes (harness.TurnComplete).
const turnComplete = "agent-turn-complete"

// notifyType is the error of JSON whose type is not a notify payload's:
// kind.ErrNotNotify.
type notifyType string

func (t notifyType) Error() string {
	return fmt.Sprintf("the notify type %q is not %s", string(t), turnComplete)
}

func (notifyType) Is(target error) bool { return target == kind.ErrNotNotify }

// Notify reads what Codex hands its notify program as the last argument,
// {"type":"agent-turn-complete","thread-id","turn-id","cwd",...}, and
// returns it as a hook payload: the same members, with hook_event_name
// agent-turn-complete, session_id the thread and turn_id the turn.
func Notify(arg []byte) ([]byte, error) {
	var n struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread-id"`
		TurnID   string `json:"turn-id"`
	}
	if err := json.Unmarshal(arg, &n); err != nil {
		return nil, fmt.Errorf("the notify argument is not JSON: %v", err)
	}
	if n.Type != turnComplete {
		return nil, notifyType(n.Type)
	}
	if n.ThreadID == "" || n.TurnID == "" {
		return nil, fmt.Errorf("the notify payload lacks thread-id or turn-id")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(arg, &members); err != nil {
		return nil, fmt.Errorf("the notify argument is not a JSON object: %v", err)
	}
	for k, v := range map[string]string{"hook_event_name": turnComplete, "session_id": n.ThreadID, "turn_id": n.TurnID} {
		// Marshal sorts the keys, and a member spelt in another case
		// sorts before this one, so the hook's reading takes this one.
		members[k], _ = json.Marshal(v)
	}
	return json.Marshal(members)
}
