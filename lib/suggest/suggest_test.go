package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClose(t *testing.T) {
	verbs := []string{"take", "list", "prune", "clean", "events", "doctor", "agents", "fork", "hook", "help"}
	assert.Equal(t, []string{"list"}, Close("lsit", verbs))
	assert.Equal(t, []string{"list"}, Close("lis", verbs))
	assert.Equal(t, []string{"agents"}, Close("agnets", verbs))
	assert.Equal(t, []string{"hook", "help"}, Close("hoep", verbs), "two edits away from each")
	assert.Empty(t, Close("xyzzy", verbs))
	assert.Equal(t, 0, editDistance("é", "é"))
	assert.Equal(t, 1, editDistance("é", "e"), "runes, not bytes")
}
