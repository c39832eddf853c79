package runpace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Pace passes through the scheduler at its first call, then not again
// until 2 ms have gone by.
func TestPace_Every2ms(t *testing.T) {
	var p Pacer
	p.Pace()
	first := p.last
	require.False(t, first.IsZero())
	p.Pace()
	require.Equal(t, first, p.last, "within 2 ms: no pass")
	time.Sleep(3 * time.Millisecond)
	p.Pace()
	require.True(t, p.last.After(first), "after 2 ms: a pass")
}
