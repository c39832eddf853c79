package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSuggest(t *testing.T) {
	verbs := []string{"take", "list", "prune", "clean", "events", "doctor", "agents", "fork", "hook", "help"}
	assert.Equal(t, []string{"list"}, Suggest("lsit", verbs))
	assert.Equal(t, []string{"list"}, Suggest("lis", verbs))
	assert.Equal(t, []string{"agents"}, Suggest("agnets", verbs))
	assert.Equal(t, []string{"hook", "help"}, Suggest("hoep", verbs), "two edits away from each")
	assert.Empty(t, Suggest("xyzzy", verbs))
	assert.Equal(t, 0, editDistance("é", "é"))
	assert.Equal(t, 1, editDistance("é", "e"), "runes, not bytes")
}
