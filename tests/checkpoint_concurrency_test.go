package tests

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// startAll starts every command at once and returns their results.
func startAll(t *testing.T, cmds []*exec.Cmd) []Result {
	t.Helper()
	results := make([]Result, len(cmds))
	outs := make([]*bytes.Buffer, len(cmds))
	errs := make([]*bytes.Buffer, len(cmds))
	for i, c := range cmds {
		outs[i], errs[i] = &bytes.Buffer{}, &bytes.Buffer{}
		c.Stdout, c.Stderr = outs[i], errs[i]
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range cmds {
		wg.Add(1)
		go func(i int, c *exec.Cmd) {
			defer wg.Done()
			<-start
			err := c.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			results[i] = Result{Args: c.Args, Stdout: outs[i].String(), Stderr: errs[i].String(), Code: code}
		}(i, c)
	}
	close(start)
	wg.Wait()
	return results
}

func TestCheckpoint_SixteenAgentsAtOnce(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("shared.txt", "the same tree for everyone\n")
	env.SetGlobal("venom.timeout", "120s") // 2 cores, 16 processes: waiting is not failing
	want := env.RecipeTree()
	snap := env.Snapshot()
	var cmds []*exec.Cmd
	for i := 1; i <= 16; i++ {
		cmds = append(cmds, env.Command(nil, "checkpoint", fmt.Sprintf("--agent=a%d", i), "--reason=turn_start", "--json"))
	}
	for _, r := range startAll(t, cmds) {
		r.OK(t)
		var res TakeResult
		r.JSON(t, &res)
		require.Equal(t, "k1", *res.Checkpoint, "%s", r.Stdout)
	}
	env.AssertUntouched(t, snap)
	refs := env.VenomRefs()
	require.Len(t, refs, 16, "one ref per agent")
	for i := 1; i <= 16; i++ {
		require.Equal(t, want, env.CheckpointTree(fmt.Sprintf("a%d", i), 1))
	}
	env.AssertSeqGapless(t)
	types := env.LogTypes()
	count := map[string]int{}
	for _, ty := range types {
		count[ty]++
	}
	require.Equal(t, map[string]int{"agent.registered": 16, "turn.started": 16, "checkpoint.taken": 16}, count)
	require.Empty(t, env.TmpFiles())
	require.True(t, lockFree(env))
}

func TestCheckpoint_SixteenCapturesOfOneAgentAtOnce(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.timeout", "120s")
	env.Take(t, "--agent=a1")
	// Each process writes its own file first, so the captures see different
	// states in whatever order they get the lock.
	var cmds []*exec.Cmd
	for i := 1; i <= 16; i++ {
		c := env.Command(nil, "checkpoint", "--agent=a1", "--json")
		c.Path = "/bin/sh"
		c.Args = []string{"sh", "-c", fmt.Sprintf("echo %d > f%02d.txt && exec git venom-checkpoint --agent=a1 --json", i, i)}
		cmds = append(cmds, c)
	}
	ids := map[string]bool{}
	newIDs := 0
	for _, r := range startAll(t, cmds) {
		r.OK(t)
		var res TakeResult
		r.JSON(t, &res)
		ids[*res.Checkpoint] = true
		if !res.Reused {
			newIDs++
		}
	}
	env.AssertSeqGapless(t)
	taken := env.Records("checkpoint.taken")
	require.Len(t, taken, 1+newIDs, "every new id has exactly one record")
	var all []string
	for _, r := range taken {
		all = append(all, r["checkpoint"].(string))
	}
	// Ids unique and without gaps: k1..kN.
	for i, id := range all {
		require.Equal(t, fmt.Sprintf("k%d", i+1), id)
	}
	for id := range ids {
		require.Contains(t, all, id, "a result named a checkpoint with no record")
	}
	require.Len(t, env.VenomRefs(), len(all), "a ref per record, no more")
	// The last checkpoint holds every file: the last capture saw them all.
	names := strings.Fields(env.Git("ls-tree", "--name-only", "refs/venom/checkpoints/a1/"+itoa(len(all))))
	sort.Strings(names)
	var want []string
	for i := 1; i <= 16; i++ {
		want = append(want, fmt.Sprintf("f%02d.txt", i))
	}
	require.Subset(t, names, want)
	// A further capture of this state reuses the last one.
	res := env.Take(t, "--agent=a1")
	require.True(t, res.Reused)
	require.Equal(t, fmt.Sprintf("k%d", len(all)), *res.Checkpoint)
	require.Empty(t, env.TmpFiles())
}
