package gcpace

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// Large sets the collector's goal to 1.5x the live heap, unless GOGC
// says otherwise.
func TestLarge(t *testing.T) {
	old := debug.SetGCPercent(400)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	Large()
	require.Equal(t, 50, debug.SetGCPercent(400))
	t.Setenv("GOGC", "100")
	Large()
	require.Equal(t, 400, debug.SetGCPercent(400), "GOGC set: left as it is")
}
