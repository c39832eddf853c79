package quote

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shell reads Shell's line back as the same words.
func TestShell_RoundTripsThroughSh(t *testing.T) {
	argv := []string{"claude", "-p", "--resume", "1b2c-3d", "it's", "a b", "", "$HOME", "*", `"x\y"`, "é"}
	line := Shell(argv)
	assert.True(t, strings.HasPrefix(line, "claude -p --resume 1b2c-3d 'it'\\''s' 'a b' ''"), line)
	out, err := exec.Command("sh", "-c", `for a in `+line+`; do printf '%s\n' "$a"; done`).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.Join(argv, "\n")+"\n", string(out))
}

func TestShell_ControlCharactersAreEscaped(t *testing.T) {
	assert.Equal(t, `codex resume "a\033[2Jb"`, Shell([]string{"codex", "resume", "a\x1b[2Jb"}))
}
