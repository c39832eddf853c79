// Package gittest runs the plain git command line for the unit tests of
// lib's packages, which check their results with git itself.
package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Run runs git in dir with stdin and extra environment, fails the test when
// git fails, and returns git's trimmed output.
func Run(t *testing.T, dir, stdin string, env []string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	c.Stdin = strings.NewReader(stdin)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}
