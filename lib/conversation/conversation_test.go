package conversation

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/state"
)

// fake is an adapter with every optional side: it rewinds turns that carry
// a harness_end, names a fresh conversation, reads prompts and is ready
// unless told otherwise.
type fake struct{ notReady error }

func (fake) CanRewind(a *agents.Agent, t *agents.Turn) bool { return t.HarnessEnd != "" }
func (fake) Rewind(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn, o Options) (*Rewound, error) {
	r := &Rewound{HarnessSession: "new-" + t.ID}
	if o.Materialize {
		r.Resume = []string{"resume", r.HarnessSession}
	}
	return r, nil
}
func (fake) HasHarnessID(t *agents.Turn) bool { return t.HarnessEnd != "" }
func (fake) Fresh(a *agents.Agent) *Rewound   { return &Rewound{HarnessSession: "fresh-" + a.ID} }
func (fake) Prompt(a *agents.Agent, t *agents.Turn, getenv func(string) string) string {
	return getenv("PROMPT") + " " + t.ID
}
func (f fake) Ready(a *agents.Agent) error { return f.notReady }

// bare has only the required side.
type bare struct{}

func (bare) CanRewind(a *agents.Agent, t *agents.Turn) bool { return true }
func (bare) Rewind(context.Context, *state.Store, *agents.Agent, *agents.Turn, Options) (*Rewound, error) {
	return &Rewound{}, nil
}

func TestRewind_AsksTheAgentsAdapter(t *testing.T) {
	Register("test-fake", fake{})
	a := &agents.Agent{ID: "a1", Harness: "test-fake"}
	ended, open := &agents.Turn{ID: "t1", HarnessEnd: "u9"}, &agents.Turn{ID: "t2"}

	assert.True(t, CanRewind(a, ended))
	assert.False(t, CanRewind(a, open))
	assert.False(t, CanRewind(a, nil), "no turn, no rewind")
	r, err := RewindWith(context.Background(), nil, a, ended, Options{Materialize: true})
	require.NoError(t, err)
	assert.Equal(t, &Rewound{HarnessSession: "new-t1", Resume: []string{"resume", "new-t1"}}, r)

	_, err = Rewind(context.Background(), nil, a, open)
	e, ok := errcode.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errcode.UnsupportedHarnessCapability, e.Code)
	assert.Equal(t, map[string]string{"fix": "--restore=files"}, e.Data)

	assert.True(t, HasHarnessID(a, ended))
	assert.False(t, HasHarnessID(a, &agents.Turn{ID: "t3", HarnessTurn: "h"}), "the adapter says which id it needs")
	assert.Equal(t, &Rewound{HarnessSession: "fresh-a1"}, Fresh(a))
	assert.Equal(t, "hello t1", Prompt(a, ended, func(string) string { return "hello" }))
	assert.NoError(t, Ready(a))
	Register("test-fake", fake{notReady: errors.New("no program")})
	assert.EqualError(t, Ready(a), "no program")
}

// Without an adapter (harness none) nothing rewinds, and the optional
// sides answer their empty values; an adapter without them too.
func TestRewind_NoAdapterOrOptionalSides(t *testing.T) {
	none := &agents.Agent{ID: "a1", Harness: "none"}
	turn := &agents.Turn{ID: "t1", HarnessTurn: "h1"}
	assert.Nil(t, For(none))
	assert.False(t, CanRewind(none, turn))
	_, err := Rewind(context.Background(), nil, none, turn)
	e, ok := errcode.As(err)
	require.True(t, ok)
	assert.Contains(t, e.Error(), "the none harness cannot rewind the conversation; use --restore=files")
	assert.True(t, HasHarnessID(none, turn), "either id, without an adapter")
	assert.False(t, HasHarnessID(none, &agents.Turn{ID: "t2"}))
	assert.False(t, HasHarnessID(none, nil))
	assert.Nil(t, Fresh(none))
	assert.Empty(t, Prompt(none, turn, nil))
	assert.NoError(t, Ready(none))

	Register("test-bare", bare{})
	b := &agents.Agent{ID: "b1", Harness: "test-bare"}
	assert.Nil(t, Fresh(b))
	assert.Empty(t, Prompt(b, turn, nil))
	assert.NoError(t, Ready(b))
}
