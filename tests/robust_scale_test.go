package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/tests/scalefixture"
)

// TestRobust_ThousandCheckpointsAndALongLog: 1,000 checkpoint refs of one
// agent and 100,000 log records. list, a capture and a rollback dry run
// stay right (their times: go run ./tests/bench -scale 1000).
func TestRobust_ThousandCheckpointsAndALongLog(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "--global", "venom.timeout", "600s")
	env.Git("config", "--global", "venom.keep", "1000000")
	for i := 0; i < 100; i++ {
		env.Write(fmt.Sprintf("file%03d.txt", i), fmt.Sprintf("%d\n", i))
	}
	env.Commit("files")
	f, err := scalefixture.Build(env.Dir, 1000, 100000, env.Environ())
	require.NoError(t, err)
	require.GreaterOrEqual(t, f.Records, 99000)
	refs := env.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/venom/checkpoints/a1")
	require.Len(t, strings.Split(refs, "\n"), 1000)

	type listed struct {
		Checkpoints []struct {
			Checkpoint string `json:"checkpoint"`
			Repos      []struct {
				Commit string `json:"commit"`
			} `json:"repos"`
		} `json:"checkpoints"`
	}
	var l listed
	env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t).JSON(t, &l)
	require.Len(t, l.Checkpoints, 50)
	require.Equal(t, "k1000", l.Checkpoints[0].Checkpoint)
	require.Equal(t, "k951", l.Checkpoints[49].Checkpoint)
	env.Venom("checkpoint", "list", "--agent=a1", "--limit=1000", "--json").OK(t).JSON(t, &l)
	require.Len(t, l.Checkpoints, 1000)
	for _, c := range l.Checkpoints {
		n := strings.TrimPrefix(c.Checkpoint, "k")
		require.Contains(t, refs, "refs/venom/checkpoints/a1/"+n+" "+c.Repos[0].Commit)
	}
	// The tree is the last checkpoint's: a capture reuses it.
	m := env.Venom("checkpoint", "--agent=a1", "--json").OK(t).Map(t)
	require.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1000", "reused": true, "skipped": []any{}}, m)

	dry := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files")
	require.Equal(t, map[string]string{"work/f00.txt": "agent"}, dry.Classes())

	env.Write("file000.txt", "changed\n")
	env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "k1001", env.lastTaken().Checkpoint)
	res := rollbackExactly(t, env, "k1", "--restore=files", "--outside=overwrite")
	require.Equal(t, "k1002", res.Safety)
	_, err = os.Stat(env.Path("work"))
	require.True(t, os.IsNotExist(err), "k1 has no work/ files")
	require.Equal(t, "0\n", env.Read("file000.txt"))
}
