package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRollback_KnownTreeAcrossFileAndFolder: a rollback whose plan turns
// a tracked file back into a folder and a tracked folder back into a file
// beside many files the private index is told of: the after-capture, and
// the capture after one more edit (built on the private index's tree,
// capture.Known's), are git add -A's tree.
func TestRollback_KnownTreeAcrossFileAndFolder(t *testing.T) {
	t.Parallel()
	var files []string
	for i := 0; i < 20; i++ {
		files = append(files, fmt.Sprintf("src/d%d/f%02d.txt", i%3, i))
	}
	env := NewEnv(t)
	for _, f := range files {
		env.Write(f, "base "+f+"\n")
	}
	env.Write("x/inner.txt", "inner\n")
	env.Write("x/deeper/y.txt", "y\n")
	env.Write("z", "z was a file\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	for _, f := range files {
		env.Write(f, strings.Repeat("agent "+f+", longer\n", 40))
	}
	env.Remove("x")
	env.Write("x", "x is a file now\n")
	env.Remove("z")
	env.Write("z/inside.txt", "z is a folder now\n")
	env.Git("add", "-A") // tracked: S holds no untracked file
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Tick()
	timings := filepath.Join(env.Root, "timings")
	plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
	var res RollbackResult
	env.VenomIn(env.Dir, []string{"VENOM_TEST_TIMINGS=" + timings}, "rollback", "--checkpoint=k1", "--restore=files",
		"--plan="+plan, "--json").OK(t).JSON(t, &res)
	require.True(t, *res.Exact)
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 4))
	require.Equal(t, env.CheckpointTree("a1", 1), env.CheckpointTree("a1", 4))
	b, err := os.ReadFile(timings)
	require.NoError(t, err)
	require.Contains(t, string(b), "noted-known-back ", "the known tree stood for the index's")
	env.Write(files[2], "edited after\n")
	var next struct {
		Checkpoint string `json:"checkpoint"`
	}
	require.NoError(t, json.Unmarshal([]byte(env.Venom("checkpoint", "--agent=a1", "--json").OK(t).Stdout), &next))
	require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/a1/"+next.Checkpoint[1:]))
}
