package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCapture_PrivateIndexCutUnderTheQuickScan: another process truncates
// the private index in place while a capture's quick scan has it mapped.
// The capture neither crashes (SIGBUS) nor fails: it starts again from a
// copy of the user's index, and its tree is git's.
func TestCapture_PrivateIndexCutUnderTheQuickScan(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for _, p := range []string{"a.txt", "d/b.txt", "d/e/c.txt"} {
		env.Write(p, p+"\n")
	}
	env.Commit("base")
	env.Take(t, "--agent=a1")
	env.Write("d/b.txt", "edited\n")
	env.Write("d/new.txt", "new\n")
	env.Take(t, "--agent=a1") // the scan record now lists the tree's folders
	indexes, err := filepath.Glob(env.Path(".git/venom/index/*.index"))
	require.NoError(t, err)
	require.Len(t, indexes, 1)

	env.Write("a.txt", "edited too\n")
	resume := env.startResumable("quick-scan-mapped", "checkpoint", "--agent=a1", "--json")
	require.NoError(t, os.Truncate(indexes[0], 0))
	res := resume()
	require.False(t, strings.Contains(res.Stderr, "SIGBUS") || strings.Contains(res.Stderr, "fatal error"),
		"the capture crashed:\n%.300s", res.Stderr)
	require.Equal(t, 0, res.Code, "%s%s", res.Stdout, res.Stderr)
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 3))

	// The next capture is quick again.
	env.Write("d/e/c.txt", "after\n")
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", mustAtoi(t, env.Checkpoint("--agent=a1")[1:])))
}
