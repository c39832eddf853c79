package agents

import (
	"errors"
	"fmt"
	"testing"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolve_ManyAgentsNamesAFew: with a tree of thousands of agents and
// none named, the hints name a few within 80 columns and say how many
// more, not every one; --json keeps them all.
func TestResolve_ManyAgentsNamesAFew(t *testing.T) {
	var es []journal.Entry
	for i := 0; i < 2000; i++ {
		es = append(es, journal.Entry{Seq: int64(i + 1), Type: journal.AgentRegistered,
			Agent: fmt.Sprintf("a%04d", i), Tree: "/t", Isolation: InPlace, Harness: "none"})
	}
	s := Fold(es)
	s.Here = "/t"
	_, err := s.Resolve("")
	var e *errcode.Error
	require.True(t, errors.As(err, &e))
	require.Len(t, e.Hints, 5, "%q", e.Hints)
	for _, h := range e.Hints {
		assert.LessOrEqual(t, len([]rune(h)), 80-len("hint: "), h)
	}
	assert.Regexp(t, `^  … and 19\d\d more: git venom-checkpoint agents lists them$`, e.Hints[3])
	assert.Equal(t, "for example --agent=a0000", e.Hints[4])
	assert.Len(t, e.Data.(map[string]any)["agents"], 2000)
}
