package tests

import (
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrash_DiskFullRollback: a guarded rollback of 200 files on a small
// tmpfs filled to a little free room. Each real call succeeds whole or
// fails with a failed.* code, undone when it began (docs/rollback.md#failures);
// index, HEAD and branches as they were, every file old or new, no torn
// record; with room again, the next command settles it and undo gives S back.
func TestCrash_DiskFullRollback(t *testing.T) {
	t.Parallel()
	env := newEnvOn(t, "12m")
	env.Write("README.md", "hello\n")
	env.Commit("initial")
	random := func() string {
		b := make([]byte, 8<<10)
		_, _ = rand.Read(b)
		return string(b)
	}
	for i := 0; i < 200; i++ {
		env.Write(fmt.Sprintf("d%d/f%03d.bin", i%10, i), random())
	}
	env.Commit("the project")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	tFiles := worktreeFiles(t, env.Dir)
	for i := 0; i < 200; i++ {
		env.Write(fmt.Sprintf("d%d/f%03d.bin", i%10, i), random())
	}
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	sFiles := worktreeFiles(t, env.Dir)
	sTree := env.RecipeTree()
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite"}

	failures := 0
	for _, free := range []int64{0, 8 << 10, 128 << 10, 512 << 10, 1 << 20, 1536 << 10, 4 << 20} {
		plan := env.DryRun(args...).Plan
		snap := env.Snapshot()
		started := len(env.Records("rollback.started"))
		filler := fillUpTo(t, env.Root, free)
		r := env.Venom("rollback", append(args, "--plan="+plan, "--json")...)
		require.NoError(t, os.Remove(filler))
		require.NotContains(t, r.Stderr, "panic:")
		t.Logf("free %d: exit %d %.300s", free, r.Code, strings.TrimSpace(r.Stdout))
		now := env.Snapshot()
		require.Equal(t, snap.Index, now.Index, "free %d: the user's index was written", free)
		require.Equal(t, snap.Head, now.Head)
		require.Equal(t, snap.Refs, now.Refs)
		require.Equal(t, snap.IndexLck, now.IndexLck)
		restored, _ := assertOldOrNew(t, env.Dir, tFiles, sFiles)
		env.assertCrashLeftovers(t)
		if r.Code != 0 {
			failures++
			require.Equal(t, 1, r.Code, "free %d: %s %s", free, r.Stdout, r.Stderr)
			require.Contains(t, r.Stdout, `"code":"failed.`, "free %d", free)
			// The way back from a write the disk refused needs no more room
			// than the way forward freed: the rollback is undone (or failed
			// before its safety checkpoint), never left partial.
			require.NotContains(t, r.Stdout, "failed.rollback_partial", "free %d", free)
			require.Zero(t, restored, "free %d: not undone", free)
			require.Equal(t, sTree, env.RecipeTree())
		}
		recs := env.Records("rollback.started")
		if len(recs) == started {
			continue
		}
		// The next command settles a rollback whose end could not be
		// logged; then the undo gives S back.
		env.Write("README.md", fmt.Sprintf("after free %d\n", free))
		env.Take(t, "--agent=a1")
		env.assertWholeLog(t)
		require.Len(t, env.Records("rollback.ended"), len(recs))
		safety := recs[len(recs)-1]["safety"].(string)
		require.Equal(t, sTree, env.CheckpointTreeOf("a1", safety), "free %d: the safety checkpoint is not S", free)
		env.Rollback("--agent=a1", "--checkpoint="+safety, "--restore=files", "--outside=overwrite")
		require.Equal(t, sTree, env.RecipeTree(), "free %d: the undo did not give S back", free)
		require.Equal(t, sFiles, worktreeFiles(t, env.Dir))
	}
	require.NotZero(t, failures, "the disk never filled up")
}
