package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// takenByReason lists the agent's checkpoint.taken records, "kN reason".
func takenByReason(env *Env, agent string) []string {
	var out []string
	for _, r := range env.LogRecords() {
		if r["type"] == "checkpoint.taken" && r["agent"] == agent {
			out = append(out, r["checkpoint"].(string)+" "+r["reason"].(string))
		}
	}
	return out
}

// prunedIDs gathers every checkpoint.pruned record's ids for the agent.
func prunedIDs(env *Env, agent string) []string {
	out := []string{}
	for _, r := range env.LogRecords() {
		if r["type"] == "checkpoint.pruned" && r["agent"] == agent {
			for _, id := range r["checkpoints"].([]any) {
				out = append(out, id.(string))
			}
		}
	}
	return out
}

func refsOf(ids ...string) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, "a1/"+strings.TrimPrefix(id, "k"))
	}
	sort.Strings(out) // for-each-ref sorts by name
	return out
}

func TestRetention_KeepThreeOverTenTurnsWithManualAndSafety(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "--global", "venom.keep", "3")
	for n := 1; n <= 5; n++ {
		env.TurnN("a1", n)
	}
	env.Write("manual.txt", "m\n")
	manual := env.Checkpoint("--agent=a1", "--label=before risky")
	n := len(env.CheckpointRefs("a1"))
	_ = n
	last := 0
	for _, tr := range takenByReason(env, "a1") {
		var k int
		fmt.Sscanf(tr, "k%d", &k)
		last = k
	}
	env.SafetyCheckpoint("a1", last+1)
	safety := fmt.Sprintf("k%d", last+1)
	for n := 6; n <= 10; n++ {
		env.TurnN("a1", n)
	}

	// The three newest counted checkpoints stay, with the manual and the
	// safety ones; everything else went, and the log says so.
	var counted, all []string
	for _, tr := range takenByReason(env, "a1") {
		id, reason, _ := strings.Cut(tr, " ")
		all = append(all, id)
		if reason != "manual" && reason != "pre_rollback" {
			counted = append(counted, id)
		}
	}
	require.Greater(t, len(counted), 10)
	keep := append([]string{manual, safety}, counted[len(counted)-3:]...)
	assert.Equal(t, refsOf(keep...), env.CheckpointRefs("a1"))
	var gone []string
	for _, id := range all {
		if !contains(keep, id) {
			gone = append(gone, id)
		}
	}
	assert.ElementsMatch(t, gone, prunedIDs(env, "a1"))

	var l struct {
		Checkpoints []struct {
			Checkpoint string `json:"checkpoint"`
		} `json:"checkpoints"`
	}
	env.Venom("checkpoint", "list", "--json").OK(t).JSON(t, &l)
	var listed []string
	for _, c := range l.Checkpoints {
		listed = append(listed, c.Checkpoint)
	}
	assert.ElementsMatch(t, keep, listed)
	env.Venom("diff", counted[0], "--json").Fails(t, 3, "not_found.checkpoint")

	// Age: a manual checkpoint goes after keepFor, a safety one only after
	// keepSafety.
	env.AgeCheckpoints("a1", 15*24*time.Hour, manual, safety)
	m := env.Venom("checkpoint", "prune", "--json").OK(t).Map(t)
	assert.Equal(t, []any{map[string]any{"agent": "a1", "repo": ".", "pruned": []any{manual}, "failed": []any{}}},
		m["checkpoints"])
	assert.Equal(t, refsOf(append([]string{safety}, counted[len(counted)-3:]...)...), env.CheckpointRefs("a1"))
	env.AgeCheckpoints("a1", 16*24*time.Hour, safety)
	env.Venom("checkpoint", "prune", "--agent=a1", "--json").OK(t)
	assert.Equal(t, refsOf(counted[len(counted)-3:]...), env.CheckpointRefs("a1"))

	// The newest never goes, however old.
	env.AgeCheckpoints("a1", 100*24*time.Hour, counted...)
	r := env.Venom("checkpoint", "prune").OK(t)
	assert.Contains(t, r.Stdout, "Pruned a1")
	assert.Equal(t, refsOf(counted[len(counted)-1]), env.CheckpointRefs("a1"))
	r = env.Venom("checkpoint", "prune").OK(t)
	assert.Equal(t, "Nothing to prune.\n", r.Stdout)
	env.Venom("checkpoint", "prune", "--agent=zz", "--json").Fails(t, 3, "not_found.agent")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRetention_MovedRefIsLeftAloneAndLockedRefRetried(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for n := 1; n <= 3; n++ {
		env.TurnN("a1", n)
	}
	require.Equal(t, []string{"a1/1", "a1/2", "a1/3", "a1/4"}, env.CheckpointRefs("a1"))
	other := env.Git("rev-parse", "refs/venom/checkpoints/a1/4")
	env.Git("update-ref", "refs/venom/checkpoints/a1/1", other) // moved by someone else
	common := env.CommonDir()
	lockFile := filepath.Join(common, "refs/venom/checkpoints/a1/2.lock")
	require.NoError(t, os.WriteFile(lockFile, nil, 0o644))
	env.Git("config", "--global", "venom.keep", "1")

	m := env.Venom("checkpoint", "prune", "--json").OK(t).Map(t)
	line := m["checkpoints"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{"k1", "k3"}, line["pruned"])
	failed := line["failed"].([]any)
	require.Len(t, failed, 1)
	assert.Equal(t, "k2", failed[0].(map[string]any)["checkpoint"])
	assert.Equal(t, other, env.Git("rev-parse", "refs/venom/checkpoints/a1/1"), "a moved ref was deleted")
	assert.Equal(t, []string{"a1/1", "a1/2", "a1/4"}, env.CheckpointRefs("a1"))

	require.NoError(t, os.Remove(lockFile))
	r := env.Venom("checkpoint", "prune").OK(t)
	assert.Equal(t, "Pruned a1: k2\n", r.Stdout)
	assert.Equal(t, []string{"a1/1", "a1/4"}, env.CheckpointRefs("a1"))
}

// worktreeAgent makes a linked worktree with agent a1 (isolation worktree)
// and its fork f1 sharing it, and another agent b1 in the main tree.
func worktreeAgent(t *testing.T) (*Env, string) {
	env := NewEnv(t)
	wt := filepath.Join(env.Root, "wt")
	env.Git("worktree", "add", "-q", "-b", "agent", wt)
	for i, a := range []string{"--agent=a1", "--agent=f1"} {
		args := []string{a, "--isolation=worktree", "--json"}
		if i == 1 {
			args = append(args, "--parent=a1")
		}
		require.NoError(t, os.WriteFile(filepath.Join(wt, "w.txt"), []byte(a), 0o644))
		env.VenomIn(wt, nil, "checkpoint", args...).OK(t)
		require.NoError(t, os.WriteFile(filepath.Join(wt, "w.txt"), []byte(a+"2"), 0o644))
		env.VenomIn(wt, nil, "checkpoint", args...).OK(t)
	}
	env.Checkpoint("--agent=b1")
	return env, wt
}

type cleaned struct {
	Agent       string `json:"agent"`
	Checkpoints []struct {
		Agent   string `json:"agent"`
		Repo    string `json:"repo"`
		Removed int    `json:"removed"`
		Kept    int    `json:"kept"`
	} `json:"checkpoints"`
}

func TestClean_WorktreeKeptKeepsAllRefs(t *testing.T) {
	t.Parallel()
	env, _ := worktreeAgent(t)
	var res cleaned
	env.Venom("checkpoint", "clean", "--agent=a1", "--json").OK(t).JSON(t, &res)
	assert.Equal(t, "a1", res.Agent)
	require.Len(t, res.Checkpoints, 1)
	assert.Equal(t, 0, res.Checkpoints[0].Removed)
	assert.Equal(t, 2, res.Checkpoints[0].Kept)
	assert.Equal(t, []string{"a1/1", "a1/2"}, env.CheckpointRefs("a1"))
	assert.Equal(t, []string{"f1/1", "f1/2"}, env.CheckpointRefs("f1"))
	recs := env.LogRecords()
	assert.Equal(t, "agent.archived", recs[len(recs)-2]["type"])
	assert.Equal(t, "checkpoint.removed", recs[len(recs)-1]["type"])
	// Archived, the id is free again: a capture registers a1 anew, its
	// numbers going on after the kept refs (plain git shows a1/3).
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	assert.Equal(t, []string{"a1/1", "a1/2", "a1/3"}, env.CheckpointRefs("a1"))
	recs = env.LogRecords()
	assert.Equal(t, "agent.registered", recs[len(recs)-2]["type"])
	agents := env.Venom("checkpoint", "agents", "--json").OK(t).Map(t)["agents"].([]any)
	assert.Equal(t, "settled", agents[0].(map[string]any)["state"])
}

func TestClean_WorktreeRemovedTakesForksRefsToo(t *testing.T) {
	t.Parallel()
	env, wt := worktreeAgent(t)
	env.Git("worktree", "remove", "--force", wt)
	var res cleaned
	env.Venom("checkpoint", "clean", "--agent=a1", "--json").OK(t).JSON(t, &res)
	require.Len(t, res.Checkpoints, 2)
	assert.Equal(t, "a1", res.Checkpoints[0].Agent)
	assert.Equal(t, 2, res.Checkpoints[0].Removed)
	assert.Equal(t, 0, res.Checkpoints[0].Kept)
	assert.Equal(t, "f1", res.Checkpoints[1].Agent)
	assert.Equal(t, 2, res.Checkpoints[1].Removed)
	assert.Empty(t, env.CheckpointRefs("a1"))
	assert.Empty(t, env.CheckpointRefs("f1"))
	assert.Equal(t, []string{"b1/1"}, env.CheckpointRefs("b1"), "another agent's refs went")
	var removed []string
	for _, r := range env.LogRecords() {
		if r["type"] == "checkpoint.removed" {
			removed = append(removed, fmt.Sprintf("%s %v %v %v", r["agent"], r["removed"], r["kept"], r["checkpoints"]))
		}
	}
	assert.Equal(t, []string{"a1 2 0 [k1 k2]", "f1 2 0 [k1 k2]"}, removed)
}

// prune --keep=N keeps N this run, as venom.keep would, and writes no
// config.
func TestPrune_KeepCountsThisRunOnly(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for n := 1; n <= 3; n++ {
		env.TurnN("a1", n)
	}
	require.Equal(t, refsOf("k1", "k2", "k3", "k4"), env.CheckpointRefs("a1"))
	snap := env.Snapshot()
	r := env.Venom("checkpoint", "prune", "--keep=2", "--dry-run").OK(t)
	assert.Equal(t, "Would prune a1: k1, k2\n", r.Stdout)
	env.Venom("checkpoint", "prune", "--keep=-1").Fails(t, 2, "invalid_params.usage")
	r = env.Venom("checkpoint", "prune", "--keep=2").OK(t)
	assert.Equal(t, "Pruned a1: k1, k2\n", r.Stdout)
	assert.Equal(t, refsOf("k3", "k4"), env.CheckpointRefs("a1"))
	assert.Equal(t, 1, env.GitRaw("config", "--global", "venom.keep").Code, "venom.keep was written")
	env.AssertUntouched(t, snap)
}

func TestClean_CopyKeepsRefsWithTheFolder(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	env.Checkpoint("--agent=c1", "--isolation=copy")
	env.Write("a.txt", "y\n")
	env.Checkpoint("--agent=c1")
	var res cleaned
	r := env.Venom("checkpoint", "clean", "--agent=c1", "--dry-run").OK(t)
	assert.Contains(t, r.Stdout, "c1: would remove 0 checkpoints, keep 2.\n"+
		"  k1, k2: the agent's copy holds them; they go when its folder is deleted.\n")
	env.Venom("checkpoint", "clean", "--agent=c1", "--json").OK(t).JSON(t, &res)
	require.Len(t, res.Checkpoints, 1)
	assert.Equal(t, 0, res.Checkpoints[0].Removed)
	assert.Equal(t, 2, res.Checkpoints[0].Kept)
	assert.Equal(t, []string{"c1/1", "c1/2"}, env.CheckpointRefs("c1"))
}

func TestClean_InPlaceKeepsYoungSafetyUntilKeepSafety(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1)
	env.TurnN("a1", 2)
	env.SafetyCheckpoint("a1", 4) // young
	env.SafetyCheckpoint("a1", 5) // old
	env.AgeCheckpoints("a1", 31*24*time.Hour, "k5")
	require.Equal(t, []string{"a1/1", "a1/2", "a1/3", "a1/4", "a1/5"}, env.CheckpointRefs("a1"))
	snap := env.Snapshot()

	// clean takes the repository's only agent as every verb does, and
	// says why what it keeps stays, dry run or not.
	why := "  k4: younger than venom.keepSafety (30d), a safety checkpoint may hold the only\n" +
		"  copy of your edits; prune removes it later.\n"
	r := env.Venom("checkpoint", "clean", "--dry-run").OK(t)
	assert.Equal(t, "Would archive a1.\na1: would remove 4 checkpoints, keep 1.\n"+why, r.Stdout)
	r = env.Venom("checkpoint", "clean").OK(t)
	assert.Equal(t, "Archived a1.\na1: removed 4 checkpoints, kept 1.\n"+why, r.Stdout)
	assert.Equal(t, []string{"a1/4"}, env.CheckpointRefs("a1"))
	env.AssertUntouched(t, snap)

	// Pruning removes it once keep_safety has passed, newest or not.
	env.Venom("checkpoint", "prune").OK(t)
	assert.Equal(t, []string{"a1/4"}, env.CheckpointRefs("a1"))
	env.AgeCheckpoints("a1", 31*24*time.Hour, "k4")
	env.Venom("checkpoint", "prune").OK(t)
	assert.Empty(t, env.CheckpointRefs("a1"))
	env.Venom("checkpoint", "clean", "--agent=nobody", "--json").Fails(t, 3, "not_found.agent")
}

func TestClean_FailedDeletionIsReportedThenRetriedByPrune(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1)
	common := env.CommonDir()
	lockFile := filepath.Join(common, "refs/venom/checkpoints/a1/1.lock")
	require.NoError(t, os.WriteFile(lockFile, nil, 0o644))
	m := env.Venom("checkpoint", "clean", "--agent=a1", "--json").OK(t).Map(t)
	line := m["checkpoints"].([]any)[0].(map[string]any)
	assert.Equal(t, float64(1), line["removed"])
	assert.Equal(t, float64(1), line["kept"])
	assert.Equal(t, "k1", line["failed"].([]any)[0].(map[string]any)["checkpoint"])
	assert.Equal(t, []string{"a1/1"}, env.CheckpointRefs("a1"))
	r := env.Venom("checkpoint", "clean", "--agent=a1")
	r.OK(t)
	assert.Contains(t, r.Stderr, "warning: the ref of a1/k1 could not be deleted")

	require.NoError(t, os.Remove(lockFile))
	env.Venom("checkpoint", "prune").OK(t)
	assert.Empty(t, env.CheckpointRefs("a1"))
}

func TestRetention_NeverRunsGC(t *testing.T) {
	t.Parallel()
	// The objects of pruned checkpoints stay until the repository's own gc.
	env := NewEnv(t)
	env.Git("config", "--global", "venom.keep", "1")
	env.TurnN("a1", 1)
	first := env.LogRecords()
	var commit string
	for _, r := range first {
		if r["type"] == "checkpoint.taken" && r["checkpoint"] == "k1" {
			commit = r["repos"].([]any)[0].(map[string]any)["commit"].(string)
		}
	}
	env.TurnN("a1", 2)
	assert.NotContains(t, env.CheckpointRefs("a1"), "a1/1")
	cmd := exec.Command("git", "cat-file", "-e", commit)
	cmd.Dir = env.Dir
	assert.NoError(t, cmd.Run(), "a pruned checkpoint's commit was removed")
}

// A pruned checkpoint merges the two windows around it, which makes
// docs/rollback.md#classes's classes more cautious, never less (docs/checkpoints.md#retention-and-clean): paths a turn changed
// become outside once the turn's end is pruned.
func TestRetention_PrunedCheckpointMergesWindows(t *testing.T) {
	t.Parallel()
	for _, keep := range []string{"100", "1"} {
		t.Run("keep="+keep, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Git("config", "--global", "venom.keep", keep)
			require.Equal(t, "k1", env.Checkpoint("--agent=a1"))
			env.Turn("a1", func() { env.Write("a.txt", "by turn one\n") })
			env.Turn("a1", func() { env.Write("b.txt", "by turn two\n") })
			r := env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--dry-run", "--json")
			if keep == "100" {
				r.OK(t)
				var res RollbackResult
				r.JSON(t, &res)
				assert.Equal(t, map[string]string{"a.txt": "turn", "b.txt": "turn"}, res.Classes())
				return
			}
			assert.Equal(t, []string{"a1/1", "a1/3"}, env.CheckpointRefs("a1"), "k2 was not pruned")
			m := r.Fails(t, 5, "conflict.outside_edits").Map(t)
			data := m["error"].(map[string]any)["data"].(map[string]any)
			assert.Equal(t, []any{map[string]any{"repo": ".", "paths": []any{"a.txt", "b.txt"}}}, data["repos"])
		})
	}
}
