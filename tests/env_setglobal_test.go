package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SetGlobal's own writes are git config --global's, byte for byte,
// through a sequence of the cases it writes and those it leaves to git.
func TestEnv_SetGlobalIsGits(t *testing.T) {
	t.Parallel()
	mine, gits := NewBareEnv(t), NewBareEnv(t)
	plain := 0
	for _, kv := range [][2]string{
		{"venom.timeout", "5s"},        // a new section
		{"venom.keep", "3"},            // a key of the last section
		{"venom.maxFileBytes", "1000"}, // again
		{"venom.keep", "4"},            // a key it has: git
		{"core.excludesFile", "/x/ignore"},
		{"user.useConfigOnly", "true"}, // a section before the last: git
		{"venom.enabled", "false"},     // a section before the last: git
		{"filter.upper.clean", "tr a-z A-Z"},
		{"gpg.program", "false"},
		{"gpg.Program", "true"}, // the same key in another case: git
		{"commit.gpgsign", "true"},
	} {
		before := plain
		if setConfigPlain(filepath.Join(mine.Home, ".gitconfig"), kv[0], kv[1]) {
			plain++
		} else {
			mine.Git("config", "--global", kv[0], kv[1])
		}
		gits.Git("config", "--global", kv[0], kv[1])
		require.Equal(t, gits.Read("../home/.gitconfig"), mine.Read("../home/.gitconfig"),
			"after %s=%s (written here: %v)", kv[0], kv[1], plain > before)
	}
	assert.Equal(t, 6, plain, "the writes SetGlobal is sure of")
}
