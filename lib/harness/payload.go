// Package harness connects git-venom to coding-agent harnesses through their
// hook systems (docs/harness.md#hooks): it reads their hook payloads, turns them into
// turns, edits, bindings and checkpoints, delivers the rollback note, and
// installs the hook entries in the harnesses' settings. What differs from
// one harness to the next is its kind.Kind, in its own subpackage (claude,
// codex, gemini), listed once in Kinds (registry.go).
package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// Events this package acts on (Claude Code's names; Codex uses the same;
// another harness's names are mapped onto them by its Kind.Aliases).
const (
	SessionStart     = "SessionStart"
	SessionEnd       = "SessionEnd"
	UserPromptSubmit = "UserPromptSubmit"
	PostToolUse      = "PostToolUse"
	Stop             = "Stop"
	StopFailure      = "StopFailure"
	Interrupt        = "Interrupt"
	// TurnComplete is a notify program's turn end (kind.Notify), with
	// the session it belongs to.
	TurnComplete = "agent-turn-complete"
)

// Payload is one hook invocation: the union of the members Claude Code
// 2.1.332 and Codex 0.171.0 send on stdin (tests/testdata/hooks), or a
// notify program's payload as kind.Notify makes it one.
type Payload struct {
	Event          string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PromptID       string          `json:"prompt_id"` // Claude Code: one prompt and its events
	TurnID         string          `json:"turn_id"`   // Codex: turn events
	Source         string          `json:"source"`    // SessionStart: startup, resume, fork, clear, compact
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	AgentID        string          `json:"agent_id"` // set inside a Claude Code subagent
}

// MaxPayloadBytes caps a hook's stdin. The largest payloads are
// PostToolUse's, which carry a tool's input and output (a file written
// whole, an image read); a harness's own limits keep those to a few MB.
const MaxPayloadBytes = 16 << 20

// ReadHook reads and parses the stdin of harness k's hook, of at most
// MaxPayloadBytes: a longer one is refused unread beyond the cap.
func ReadHook(r io.Reader, k *kind.Kind) (*Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the hook payload: %v", err)
	}
	if len(data) > MaxPayloadBytes {
		return nil, fmt.Errorf("the hook payload is over %d bytes", MaxPayloadBytes)
	}
	return ParseHook(data, k)
}

// ParseHook parses the stdin of harness k's hook (k nil: any harness
// without a notify program): a hook payload, or its notify program's.
func ParseHook(data []byte, k *kind.Kind) (*Payload, error) {
	var p Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("the hook payload is not JSON: %v", err)
	}
	if p.Event == "" {
		if k != nil && k.Notify != nil {
			if hook, err := k.Notify(data); !errors.Is(err, kind.ErrNotNotify) {
				if err != nil {
					return nil, err
				}
				return ParseHook(hook, nil)
			}
		}
		return nil, fmt.Errorf("the hook payload has no hook_event_name")
	}
	return p.checkIDs()
}

// ParseNotify reads the notify payload harness k's hook gets as its last
// argument (kind.Notify).
func ParseNotify(arg string, k *kind.Kind) (*Payload, error) {
	if k.Notify == nil {
		return nil, fmt.Errorf("%s's hook reads its payload on stdin, not as an argument", k.Title)
	}
	hook, err := k.Notify([]byte(arg))
	if err != nil {
		return nil, err
	}
	return ParseHook(hook, nil)
}

// MaxIDBytes caps the harness's ids a payload carries (session, turn,
// prompt): Claude Code's and Codex's are UUIDs. Each is logged with every
// turn, so a payload of megabyte ids would make every later command read
// megabytes per record.
const MaxIDBytes = 256

// checkIDs refuses a payload whose ids are over MaxIDBytes or hold control
// characters (a NUL, a newline): nothing of it is logged.
func (p *Payload) checkIDs() (*Payload, error) {
	for _, id := range []struct{ name, v string }{{"session_id", p.SessionID}, {"prompt_id", p.PromptID},
		{"turn_id", p.TurnID}, {"agent_id", p.AgentID}} {
		if len(id.v) > MaxIDBytes {
			return nil, fmt.Errorf("the hook payload's %s is over %d bytes", id.name, MaxIDBytes)
		}
		if strings.ContainsFunc(id.v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("the hook payload's %s holds a control character", id.name)
		}
	}
	return p, nil
}

// Canonical renames the payload's event to the name this package acts on,
// for a harness whose events are named otherwise (Gemini CLI's BeforeAgent
// is UserPromptSubmit).
func (p *Payload) Canonical(k *kind.Kind) {
	if name, ok := k.Aliases[p.Event]; ok {
		p.Event = name
	}
}

// TurnKey is the harness's id of the turn the event belongs to: Codex's
// turn_id, else Claude Code's prompt_id ("" when the payload has neither).
func (p *Payload) TurnKey() string {
	if p.TurnID != "" {
		return p.TurnID
	}
	return p.PromptID
}

// Known reports whether the event is one of the harnesses' hook events,
// whether or not this package acts on it.
func Known(event string) bool {
	switch event {
	case SessionStart, SessionEnd, UserPromptSubmit, PostToolUse, Stop, StopFailure, Interrupt, TurnComplete,
		"PreToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "SubagentStart", "SubagentStop",
		"PreCompact", "PostCompact", "PermissionRequest", "PermissionDenied", "UserPromptExpansion":
		return true
	}
	return strings.HasPrefix(event, "Pre") || strings.HasPrefix(event, "Post")
}
