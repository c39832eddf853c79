package runpace

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Pace passes through the scheduler at its first call, then not again
// until 2 ms have gone by. The last pass is set, not waited for: a test
// preempted between two calls would see a pass it did not ask for.
func TestPace_Every2ms(t *testing.T) {
	var p Pacer
	p.Pace()
	require.False(t, p.last.IsZero(), "the first call passes")
	recent := time.Now().Add(time.Hour) // ahead of the clock: never 2 ms old
	p.last = recent
	p.Pace()
	require.Equal(t, recent, p.last, "within 2 ms: no pass")
	old := time.Now().Add(-3 * time.Millisecond)
	p.last = old
	p.Pace()
	require.True(t, p.last.After(old), "after 2 ms: a pass")
}

// LargeHeap sets the collector's goal to 1.5x the live heap, unless GOGC
// says otherwise.
func TestLargeHeap(t *testing.T) {
	old := debug.SetGCPercent(400)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	LargeHeap()
	require.Equal(t, 50, debug.SetGCPercent(400))
	t.Setenv("GOGC", "100")
	LargeHeap()
	require.Equal(t, 400, debug.SetGCPercent(400), "GOGC set: left as it is")
}
