package errcode

import (
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClassExitCodes(t *testing.T) {
	want := map[Class]int{Failed: 1, InvalidParams: 2, NotFound: 3, Denied: 4, Conflict: 5, Timeout: 7, Unsupported: 10}
	for class, code := range want {
		assert.Equal(t, code, class.Exit(), class)
	}
	assert.Equal(t, 1, Class("nonsense").Exit())
}

// Every registered code is <class>.<name> of a known class, and has a
// sentence (the man pages and docs print them).
func TestRegistryCodesAreWellFormed(t *testing.T) {
	shape := regexp.MustCompile(`^[a-z_]+\.[a-z_]+$`)
	for code, text := range Registry {
		assert.Regexp(t, shape, string(code))
		// An unknown class would fall back to exit 1 silently.
		assert.False(t, code.Class() != Failed && code.Class().Exit() == 1, code)
		assert.NotEmpty(t, text, code)
	}
}

func TestFromKeepsCodedErrorsAndWrapsOthers(t *testing.T) {
	coded := New(NotFoundAgent, nil)
	assert.Same(t, coded, From(fmt.Errorf("ctx: %w", coded), FailedInternal))

	plain := errors.New("disk on fire")
	e := From(plain, FailedInternal)
	assert.Equal(t, FailedInternal, e.Code)
	assert.ErrorIs(t, e, plain)
	assert.True(t, Is(fmt.Errorf("x: %w", e), FailedInternal))
}

func TestLine(t *testing.T) {
	assert.Equal(t, "no such agent", Newf(NotFoundAgent, nil, "no such agent").Line())
	assert.Equal(t, "cannot read HEAD: bad object", Newf(FailedState, nil, "cannot read HEAD").Wrap(errors.New("bad object")).Line())
	assert.Equal(t, "x: boom", Newf(FailedState, nil, "x: boom").Wrap(errors.New("boom")).Line())
}

type reasoned struct{}

func (reasoned) Error() string  { return "git rev-parse --a --b --c: exit 128: fatal: nope" }
func (reasoned) Reason() string { return "git rev-parse: fatal: nope" }

// A cause that can say itself shortly (a failed git command) ends the line
// with that, not with its whole argument list.
func TestLineUsesShortReason(t *testing.T) {
	assert.Equal(t, "not in a repository: git rev-parse: fatal: nope", Newf(UnsupportedCheckpointNoRepo, nil, "not in a repository").Wrap(reasoned{}).Line())
}
