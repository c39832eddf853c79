package tests

import (
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// failEnv: a1 unguarded, a turn that commits, deletes and writes; the
// rollback to k1 moves HEAD, deletes a file and writes others.
func failEnv(t *testing.T) *Env {
	t.Helper()
	env := NewEnv(t)
	env.Write("keep/a.txt", "a\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("keep/a.txt", "changed\n")
	env.Write("made/by/turn.txt", "new\n")
	env.Commit("the agent's commit")
	env.Write("README.md", "dirty\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	return env
}

func TestRollback_GitFailureIsUndone(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"rollback-apply-unlink", "rollback-apply-write", "rollback-head"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			env := failEnv(t)
			before := env.Snapshot()
			tree := env.RecipeTree()
			r := env.RollbackFails([]string{"VENOM_TEST_FAIL_AT=" + point}, 1, "failed.rollback_undone",
				"--checkpoint=k1", "--restore=files")
			require.JSONEq(t, `"."`, jsonOf(t, r.Map(t)["error"].(map[string]any)["data"].(map[string]any)["repo"]))
			require.Equal(t, tree, env.RecipeTree(), "the tree is not S again")
			after := env.Snapshot()
			require.Equal(t, before.Index, after.Index, "the index is not as it was")
			require.Equal(t, before.Head, after.Head)
			require.Equal(t, before.Refs, after.Refs, "the branch is not back")
			ended := env.Records("rollback.ended")
			require.Len(t, ended, 1)
			require.Equal(t, false, ended[0]["ok"])
			require.Equal(t, "failed.rollback_undone", ended[0]["code"])
			require.Equal(t, "k3", ended[0]["safety"])
			// Undone, it left S: --undo passes over it, and there is no
			// rollback before it.
			env.Venom("rollback", "--undo", "--restore=files", "--dry-run", "--json").Fails(t, 3, "not_found.checkpoint")
		})
	}
}

func TestRollback_WayBackFailsIsPartial(t *testing.T) {
	t.Parallel()
	env := failEnv(t)
	tree := env.RecipeTree()
	r := env.RollbackFails([]string{"VENOM_TEST_FAIL_AT=rollback-apply-write,rollback-undo"}, 1,
		"failed.rollback_partial", "--checkpoint=k1", "--restore=files")
	data := r.Map(t)["error"].(map[string]any)["data"].(map[string]any)
	require.Equal(t, "k3", data["safety"])
	require.Equal(t, ".", data["repos"].([]any)[0].(map[string]any)["repo"])
	require.Regexp(t, `"repos":\[\{"repo":".","state":"partial","reason":"`, r.Stdout, "docs/errors.md's member order")
	require.Equal(t, "failed.rollback_partial", env.Records("rollback.ended")[0]["code"])
	// The safety checkpoint is whole, and --undo goes back to it.
	require.Equal(t, tree, env.CheckpointTree("a1", 3))
	require.Contains(t, r.Stderr+r.Stdout, "--undo")
	screen := env.Venom("rollback", "--undo", "--restore=files", "--outside=overwrite", "--dry-run").OK(t).Stdout
	require.Contains(t, strings.Join(strings.Fields(screen), " "), "which did not end (failed.rollback_partial, its way back failed)")
	env.Rollback("--undo", "--restore=files", "--outside=overwrite")
	require.Equal(t, tree, env.RecipeTree())
}

// TestRollback_CrashAtEachStep: kill -9 at each step of docs/rollback.md#the-real-call. The next
// command that takes the lock logs failed.rollback_interrupted and writes
// nothing to the tree; the safety checkpoint holds S, and --undo goes
// back there, before and after the crash is settled, as git rebase
// --abort does: the files, HEAD and the branch as before the rollback.
func TestRollback_CrashAtEachStep(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"rollback-after-safety", "rollback-apply-unlink", "rollback-apply-write",
		"rollback-head", "rollback-before-ended"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			env := failEnv(t)
			s := env.RecipeTree()
			before := env.Snapshot()
			plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
			c := env.StartPaused(point, nil, "rollback", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json")
			Kill9(t, c)
			require.Len(t, env.Records("rollback.started"), 1)
			require.Len(t, env.Records("rollback.ended"), 0)
			// A dry run does not settle it (it takes no lock and logs nothing).
			env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--keep-head", "--dry-run", "--json").OK(t)
			require.Len(t, env.Records("rollback.ended"), 0)
			// --undo names the crashed rollback before it is settled.
			require.Equal(t, "k3", env.DryRun("--undo", "--restore=files").Checkpoint)
			screen := env.Venom("rollback", "--undo", "--restore=files", "--dry-run").OK(t).Stdout
			require.Contains(t, strings.Join(strings.Fields(screen), " "), "Undo the rollback of a1 to k1, which did "+
				"not end (failed.rollback_interrupted, its process died): back to its safety checkpoint k3")
			crashed := env.Snapshot()
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			after := env.Snapshot()
			require.Equal(t, crashed.Files, after.Files, "settling wrote to the tree")
			require.Equal(t, crashed.Index, after.Index)
			ended := env.Records("rollback.ended")
			require.Len(t, ended, 1)
			require.Equal(t, false, ended[0]["ok"])
			require.Equal(t, "failed.rollback_interrupted", ended[0]["code"])
			require.Equal(t, "k3", ended[0]["safety"])
			// Nothing lost: the safety checkpoint is S, and --undo brings
			// the tree back from it, with HEAD where it was.
			require.Equal(t, s, env.CheckpointTree("a1", 3))
			env.Rollback("--undo", "--restore=files", "--outside=overwrite")
			require.Equal(t, s, env.RecipeTree())
			require.Equal(t, before.Head, env.Snapshot().Head)
			require.Equal(t, before.Refs, env.Snapshot().Refs, "the branch is not back")
		})
	}
}

// TestRollback_Concurrent: a capture and a rollback of one agent started
// together, and two rollbacks of one tree; the log stays whole.
func TestRollback_Concurrent(t *testing.T) {
	t.Parallel()
	env := failEnv(t)
	plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
	run := func(cmds ...*exec.Cmd) []int {
		var wg sync.WaitGroup
		codes := make([]int, len(cmds))
		for i, c := range cmds {
			wg.Add(1)
			go func(i int, c *exec.Cmd) {
				defer wg.Done()
				_ = c.Run()
				codes[i] = c.ProcessState.ExitCode()
			}(i, c)
		}
		wg.Wait()
		return codes
	}
	rb := func() *exec.Cmd {
		return env.Command(nil, "rollback", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json")
	}
	codes := run(rb(), rb())
	require.ElementsMatch(t, []int{0, 5}, codes, "two rollbacks of one tree")
	require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())

	env.Write("README.md", "dirty again\n")
	plan = env.DryRun("--checkpoint=k1", "--restore=files").Plan
	codes = run(rb(), env.Command(nil, "checkpoint", "--agent=a1", "--json"))
	require.Equal(t, 0, codes[1], "the capture failed")
	require.Contains(t, []int{0, 5}, codes[0])
	var seqs []int
	for _, r := range env.LogRecords() {
		seqs = append(seqs, int(r["seq"].(float64)))
	}
	for i := range seqs {
		require.Equal(t, i+1, seqs[i], "the log's seq has a gap")
	}
	require.Len(t, env.Records("rollback.started"), len(env.Records("rollback.ended")))
}

func jsonOf(t *testing.T, v any) string {
	b, err := jsonMarshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestRollback_NothingBeforeTheSafetyCheckpoint: invariant 2. When the
// safety checkpoint cannot be made, the rollback fails with nothing changed.
func TestRollback_NothingBeforeTheSafetyCheckpoint(t *testing.T) {
	t.Parallel()
	env := failEnv(t)
	snap := env.Snapshot()
	refs := env.Git("for-each-ref", "refs/venom")
	env.RollbackFails([]string{"VENOM_TEST_FAIL_AT=ref-create"}, 1, "failed.checkpoint_git", "--checkpoint=k1", "--restore=files")
	env.AssertUntouched(t, snap)
	require.Equal(t, refs, env.Git("for-each-ref", "refs/venom"))
	require.Len(t, env.Records("rollback.started"), 0)
	require.Len(t, env.Records("rollback.ended"), 0)
}
