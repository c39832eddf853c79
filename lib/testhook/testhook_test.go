//go:build venomtest

package testhook

import (
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
