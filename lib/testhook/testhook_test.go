//go:build venomtest

package testhook

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPoint_NthOccurrence(t *testing.T) {
	t.Setenv("VENOM_TEST_FAIL_AT", "a#2,b")
	assert.NoError(t, Point("a"))
	assert.Error(t, Point("a"))
	assert.NoError(t, Point("a"))
	assert.Error(t, Point("b"))
	assert.Error(t, Point("b"))
	assert.NoError(t, Point("c"))
}

// TestPointIn_TheCommandsOwn: under With, a point obeys the command's
// VENOM_TEST_FAIL_AT, counted for that command alone, else the
// process's; without With, the process's.
func TestPointIn_TheCommandsOwn(t *testing.T) {
	bg := context.Background()
	one := With(bg, []string{"VENOM_TEST_FAIL_AT=a#2"})
	two := With(bg, []string{"VENOM_TEST_FAIL_AT=a#2"})
	plain := With(bg, []string{"HOME=/nowhere"})
	assert.NoError(t, PointIn(one, "a"))
	assert.NoError(t, PointIn(two, "a"))
	assert.NoError(t, PointIn(plain, "a"))
	assert.Error(t, PointIn(one, "a"), "the command's second pass")
	assert.Error(t, PointIn(two, "a"), "the other command's second pass")
	assert.NoError(t, PointIn(plain, "a"), "a command without the knob")
	assert.NoError(t, PointIn(bg, "a"), "the process without the knob")
	t.Setenv("VENOM_TEST_FAIL_AT", "b")
	assert.Error(t, PointIn(plain, "b"), "the process's, the command having none")
	assert.NoError(t, PointIn(With(bg, []string{"VENOM_TEST_FAIL_AT="}), "b"), "the command's, empty")
	assert.Error(t, PointIn(bg, "b"))
}
