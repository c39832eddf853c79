// Package conversation is the seam between rollback and the harness
// adapters: rewinding an agent's conversation (docs/rollback.md#conversation). The harness package
// registers its adapters here; rollback asks through Rewind.
package conversation

import (
	"context"
	"fmt"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/state"
)

// Rewound is a new conversation holding the turns through the target.
type Rewound struct {
	HarnessSession string   // the new session or thread id
	Resume         []string // the argv that continues it, when the harness needs one
	ForkSource     string   // recorded on the binding until the copy exists (claude-code)
	ForkAt         string
}

// Options are the caller's choices for one rewind.
type Options struct {
	// Materialize asks claude-code to write the forked session file now, as
	// the Agent SDK's forkSession does, so that an interactive `claude
	// --resume NEW` opens it (interactive mode ignores --resume-session-at).
	Materialize bool
}

// Adapter is one harness's conversation side.
type Adapter interface {
	// CanRewind says whether the adapter declares rewind for this turn
	// (claude-code: only up to its tested version, docs/harness.md#rewind).
	CanRewind(a *agents.Agent, t *agents.Turn) bool
	// Rewind makes a new conversation through turn t, leaving the source
	// unchanged (docs/rollback.md#conversation). It must not write the journal; the rollback logs
	// the binding in its final record.
	Rewind(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn, o Options) (*Rewound, error)
}

// IDNeeder is an adapter that names the harness id a turn needs for a
// rewind (docs/rollback.md#conversation: "a turn logged without the one its adapter needs has no
// harness id for this purpose").
type IDNeeder interface {
	HasHarnessID(t *agents.Turn) bool
}

// HasHarnessID reports whether turn t carries the harness id the agent's
// adapter rewinds by: harness_end for claude-code, harness_turn for codex;
// either one for a harness without an adapter.
func HasHarnessID(a *agents.Agent, t *agents.Turn) bool {
	if t == nil {
		return false
	}
	if n, ok := For(a).(IDNeeder); ok {
		return n.HasHarnessID(t)
	}
	return t.HarnessTurn != "" || t.HarnessEnd != ""
}

// Checker is an adapter that can tell before anything is written that a
// rewind cannot run here: its harness program is missing, say.
type Checker interface {
	Ready(a *agents.Agent) error
}

// Ready asks the agent's adapter whether a rewind can run now; nil when
// it cannot tell.
func Ready(a *agents.Agent) error {
	if c, ok := For(a).(Checker); ok {
		return c.Ready(a)
	}
	return nil
}

var adapters = map[string]Adapter{}

// Register installs the adapter of a harness ("claude-code", "codex").
func Register(harness string, ad Adapter) { adapters[harness] = ad }

// For returns the agent's adapter, or nil (harness "none").
func For(a *agents.Agent) Adapter { return adapters[a.Harness] }

// CanRewind reports whether the agent's harness can rewind to turn t.
func CanRewind(a *agents.Agent, t *agents.Turn) bool {
	ad := For(a)
	return ad != nil && t != nil && ad.CanRewind(a, t)
}

// Explainer is an adapter that can say why it cannot rewind to a turn
// (the turn's end is missing from the transcript, say).
type Explainer interface {
	// WhyNot says, as a clause, why the adapter cannot rewind to t;
	// called only when CanRewind is false.
	WhyNot(a *agents.Agent, t *agents.Turn) string
}

// WhyNoRewind says what cannot be rewound to, as a clause for an error:
// the harness, when it has no rewind at all; else the turn, and why
// when its adapter can say. turn is the turn's id, t nil when the log
// no longer holds it.
func WhyNoRewind(a *agents.Agent, turn string, t *agents.Turn) string {
	ad := For(a)
	switch {
	case ad == nil:
		return fmt.Sprintf("the %s harness cannot rewind the conversation", a.Harness)
	case t == nil:
		return fmt.Sprintf("the conversation cannot be rewound to turn %s: the log no longer holds it", turn)
	}
	if why := WhyNot(a, t); why != "" {
		return fmt.Sprintf("the conversation cannot be rewound to turn %s: %s", turn, why)
	}
	return fmt.Sprintf("the conversation cannot be rewound to turn %s", turn)
}

// WhyNot is the adapter's reason it cannot rewind to t, or "".
func WhyNot(a *agents.Agent, t *agents.Turn) string {
	if ex, ok := For(a).(Explainer); ok && t != nil {
		return ex.WhyNot(a, t)
	}
	return ""
}

// Rewind asks the agent's adapter for a rewind, or fails with
// unsupported.harness_capability (docs/rollback.md#conversation).
func Rewind(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn) (*Rewound, error) {
	return RewindWith(ctx, s, a, t, Options{})
}

// RewindWith is Rewind with the caller's options.
func RewindWith(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn, o Options) (*Rewound, error) {
	if !CanRewind(a, t) {
		id := ""
		if t != nil {
			id = t.ID
		}
		return nil, errcode.Newf(errcode.UnsupportedHarnessCapability, map[string]string{"fix": "--restore=files"},
			"%s; use --restore=files", WhyNoRewind(a, id, t))
	}
	return For(a).Rewind(ctx, s, a, t, o)
}

// Prompter is an adapter that can read, from the harness's own transcript,
// the prompt that opened a turn (explain).
type Prompter interface {
	// Prompt returns the turn's prompt text, or "" when the transcript is
	// not there or does not hold it. getenv is the command's environment
	// (HOME, CLAUDE_CONFIG_DIR, CODEX_HOME).
	Prompt(a *agents.Agent, t *agents.Turn, getenv func(string) string) string
}

// Prompt asks the agent's adapter for the prompt of turn t; "" when the
// harness has no transcript reader or the transcript lacks it.
func Prompt(a *agents.Agent, t *agents.Turn, getenv func(string) string) string {
	if p, ok := For(a).(Prompter); ok && t != nil {
		return p.Prompt(a, t, getenv)
	}
	return ""
}
