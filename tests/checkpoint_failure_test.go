package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertFailedCleanly checks what every failed capture must leave: a
// checkpoint.failed record with the code, no new ref, no temporary file, the
// lock free, and the user's state untouched.
func assertFailedCleanly(t *testing.T, env *Env, snap Snapshot, refs []string, code string) {
	t.Helper()
	env.AssertUntouched(t, snap)
	require.Equal(t, refs, env.VenomRefs(), "a failed capture left a ref")
	require.Empty(t, env.TmpFiles(), "a failed capture left temporary files")
	failed := env.Records("checkpoint.failed")
	require.NotEmpty(t, failed, "no checkpoint.failed record")
	last := failed[len(failed)-1]
	require.Equal(t, code, last["code"])
	require.Equal(t, "a1", last["agent"])
	require.Equal(t, "manual", last["reason"])
	env.AssertSeqGapless(t)
	require.True(t, lockFree(env), "the lock is still held")
}

// lockFree reports whether the state directory's lock can be taken now.
func lockFree(env *Env) bool {
	f, err := os.OpenFile(filepath.Join(env.StateDir(), "lock"), os.O_RDWR, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

func TestCheckpoint_TooLargeNamesTheFiveLargest(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.SetGlobal("venom.maxTotalBytes", "2000")
	env.SetGlobal("venom.maxFileBytes", "800")
	sizes := map[string]int{"f1": 100, "f2": 200, "f3": 300, "dir/f4": 400, "f5": 500, "f6\xff": 600, "f7": 700,
		"skipped.bin": 5000}
	for p, n := range sizes {
		env.Write(p, strings.Repeat("x", n))
	}
	snap := env.Snapshot()
	refs := env.VenomRefs()

	r := env.Venom("checkpoint", "--agent=a1", "--json")
	r.Fails(t, 1, "failed.checkpoint_too_large")
	e := ErrorOf(t, r)
	// docs/errors.md#data: {repo, bytes, limit, largest}, bytes after the skips,
	// largest five {path, bytes}, in that member order.
	require.Equal(t, []string{"repo", "bytes", "limit", "largest", "folders"}, Keys(t, string(e.Error.Data)))
	var data struct {
		Repo    string        `json:"repo"`
		Bytes   int64         `json:"bytes"`
		Limit   int64         `json:"limit"`
		Largest []SkippedPath `json:"largest"`
	}
	require.NoError(t, json.Unmarshal(e.Error.Data, &data))
	assert.Equal(t, ".", data.Repo)
	assert.Equal(t, int64(2800), data.Bytes, "skipped.bin is over maxFileBytes and does not count")
	assert.Equal(t, int64(2000), data.Limit)
	assert.Equal(t, []SkippedPath{
		{Path: "f7", Bytes: 700},
		{Path: "f6\uFFFD", PathB64: "Zjb/", Bytes: 600},
		{Path: "f5", Bytes: 500},
		{Path: "dir/f4", Bytes: 400},
		{Path: "f3", Bytes: 300},
	}, data.Largest)
	var largest []json.RawMessage
	require.NoError(t, json.Unmarshal(mustField(t, e.Error.Data, "largest"), &largest))
	require.Equal(t, []string{"path", "bytes"}, Keys(t, string(largest[0])))
	assertFailedCleanly(t, env, snap, refs, "failed.checkpoint_too_large")

	// Human form: the code on stderr, exit 1.
	h := env.Venom("checkpoint", "--agent=a1")
	require.Equal(t, 1, h.Code)
	require.True(t, strings.HasPrefix(h.Stderr, "error: failed.checkpoint_too_large"), h.Stderr)

	// Once the files are ignored, the capture works.
	env.Write(".gitignore", "f*\ndir/\n")
	env.Take(t, "--agent=a1")
}

func mustField(t *testing.T, obj json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj, &m))
	return m[name]
}

func TestCheckpoint_TimeoutWhileACleanFilterRuns(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	pidFile := filepath.Join(env.Root, "filter.pid")
	// The filter records its pid, then outlives any sensible timeout.
	env.Git("config", "filter.slow.clean", "echo $$ > '"+pidFile+"'; exec sleep 600")
	env.Write(".gitattributes", "*.slow filter=slow\n")
	env.Write("x.slow", "slow\n")
	env.SetGlobal("venom.timeout", "2s")
	snap := env.Snapshot()
	refs := env.VenomRefs()

	cmd := env.Command(nil, "checkpoint", "--agent=a1", "--json")
	var out strings.Builder
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the capture waited for the clean filter far past venom.timeout")
	}
	r := Result{Args: cmd.Args, Stdout: out.String(), Code: cmd.ProcessState.ExitCode()}
	r.Fails(t, 7, "timeout.checkpoint")
	e := ErrorOf(t, r)
	require.JSONEq(t, `{"repo":"."}`, string(e.Error.Data))
	assertFailedCleanly(t, env, snap, refs, "timeout.checkpoint")

	// The filter was stopped with the capture, not left running.
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the filter never ran")
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	require.Error(t, syscall.Kill(pid, 0), "the clean filter (pid %d) still runs", pid)

	// Without the slow file, the next capture works.
	env.Remove("x.slow")
	env.Write("y.txt", "y\n")
	want := env.RecipeTree()
	res := env.Take(t, "--agent=a1")
	require.Equal(t, "k2", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 2))
}

func TestCheckpoint_TimeoutWhileTheLockIsHeld(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.Write("a.txt", "changed\n")
	env.SetGlobal("venom.timeout", "1s")
	refs := env.VenomRefs()
	before := env.LogRecords()

	f, err := os.OpenFile(filepath.Join(env.StateDir(), "lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	r := env.Venom("checkpoint", "--agent=a1", "--json")
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
	f.Close()

	r.Fails(t, 7, "timeout.checkpoint")
	ErrorOf(t, r)
	require.Equal(t, refs, env.VenomRefs())
	require.Equal(t, before, env.LogRecords(), "nothing can be logged without the lock")
	require.Equal(t, "k2", *env.Take(t, "--agent=a1").Checkpoint)
}

func TestCheckpoint_FailuresLeaveNothingBehind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		point string
		exit  int
		code  string
	}{
		{"capture-scan", 1, "failed.checkpoint_git"},
		{"capture-object-write", 1, "failed.checkpoint_git"},
		{"ref-create", 1, "failed.checkpoint_git"},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Take(t, "--agent=a1")
			env.Write("a.txt", "changed\n")
			env.Write("new.txt", "new\n")
			snap := env.Snapshot()
			refs := env.VenomRefs()
			r := env.VenomIn(env.Dir, []string{"VENOM_TEST_FAIL_AT=" + c.point}, "checkpoint", "--agent=a1", "--json")
			r.Fails(t, c.exit, c.code)
			e := ErrorOf(t, r)
			require.Equal(t, []string{"repo", "reason"}, Keys(t, string(e.Error.Data)), "docs/errors.md#data: {repo, reason}")
			assertFailedCleanly(t, env, snap, refs, c.code)
			// The next capture is whole, and takes the next number.
			want := env.RecipeTree()
			require.Equal(t, "k2", *env.Take(t, "--agent=a1").Checkpoint)
			require.Equal(t, want, env.CheckpointTree("a1", 2))
		})
	}
}

func TestCheckpoint_LogWriteFailureLeavesNoRef(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.Write("a.txt", "changed\n")
	refs := env.VenomRefs()
	before := env.LogRecords()
	r := env.VenomIn(env.Dir, []string{"VENOM_TEST_FAIL_AT=log-fsync"}, "checkpoint", "--agent=a1", "--json")
	require.NotEqual(t, 0, r.Code)
	ErrorOf(t, r)
	// A ref no record names would be adopted later; the capture removed it.
	require.Equal(t, refs, env.VenomRefs(), "a ref without its log record")
	require.Equal(t, before, env.LogRecords())
	env.AssertSeqGapless(t)
	require.Empty(t, env.TmpFiles())
	require.Equal(t, "k2", *env.Take(t, "--agent=a1").Checkpoint)
}

func TestCheckpoint_EnabledFalseStopsOnlyAutomaticCaptures(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.enabled", "false")
	env.Write("a.txt", "x\n")
	for _, reason := range []string{"turn_start", "turn_end"} {
		r := env.Venom("checkpoint", "--agent=a1", "--reason="+reason, "--json").OK(t)
		require.Equal(t, []string{"agent", "checkpoint", "reused", "skipped"}, Keys(t, r.Stdout))
		var res TakeResult
		r.JSON(t, &res)
		require.Nil(t, res.Checkpoint, "%s captured with venom.enabled=false", reason)
		require.Empty(t, env.VenomRefs())
		require.Empty(t, env.Records("checkpoint.taken"))
	}
	h := env.Venom("checkpoint", "--agent=a1", "--reason=turn_start").OK(t)
	require.NotEmpty(t, strings.TrimSpace(h.Stdout), "a human word that nothing was captured")

	// manual is an explicit ask: it still works.
	want := env.RecipeTree()
	res := env.Take(t, "--agent=a1")
	require.Equal(t, "k1", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	for _, v := range []string{"true", "yes", "1"} {
		env.SetGlobal("venom.enabled", v)
		env.Write("a.txt", v+"\n")
		res := env.Take(t, "--agent=a1", "--reason=turn_start")
		require.NotNil(t, res.Checkpoint, "venom.enabled=%s", v)
	}
	// venom.* in the repository's own config is not consulted (docs/checkpoints.md#configuration).
	env.Git("config", "--global", "--unset", "venom.enabled")
	env.Git("config", "venom.enabled", "false")
	env.Write("a.txt", "repo config\n")
	require.NotNil(t, env.Take(t, "--agent=a1", "--reason=turn_end").Checkpoint)
}

// TestCheckpoint_AgentTreeMissing: an agent whose linked worktree was
// removed, by git worktree remove or by deleting its folder (git then
// lists it "prunable"), is conflict.tree_stale with reason removed,
// refused before its turn moves, never a failed capture (exit 1). Where
// git still lists the worktree the hints say git worktree prune, and it
// works as printed, as do the hints that list and archive the agent.
func TestCheckpoint_AgentTreeMissing(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"git worktree remove", "rm -rf"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			wt := filepath.Join(env.Root, "wt")
			env.Git("worktree", "add", "-q", "-b", "feature", wt)
			env.VenomIn(wt, nil, "checkpoint", "--agent=w1", "--isolation=worktree", "--json").OK(t)
			if how == "rm -rf" {
				require.NoError(t, os.RemoveAll(wt))
				require.Contains(t, env.Git("worktree", "list", "--porcelain"), "prunable")
			} else {
				env.Git("worktree", "remove", wt)
			}
			refs, records := env.VenomRefs(), len(env.LogRecords())

			r := env.Venom("checkpoint", "--agent=w1", "--reason=turn_start", "--json")
			r.Fails(t, 5, "conflict.tree_stale")
			require.Equal(t, map[string]any{"agent": "w1", "tree": wt, "reason": "removed"}, errorData(t, r))
			require.Equal(t, refs, env.VenomRefs())
			require.Len(t, env.LogRecords(), records, "refused before its turn moved: nothing logged")

			human := env.Venom("checkpoint", "--agent=w1").Fails(t, 5, "conflict.tree_stale").Stderr
			require.Contains(t, human, "error: conflict.tree_stale: agent w1's worktree was removed\n")
			fitsEighty(t, "refusal", human)
			const prune = "hint:   git worktree prune\n"
			if how == "rm -rf" {
				require.Contains(t, human, prune)
				env.run(env.Dir, nil, "sh", "-c", "git worktree prune").OK(t) // as printed
				require.NotContains(t, env.Git("worktree", "list", "--porcelain"), wt, "pruned as the hint says")
				human = env.Venom("checkpoint", "--agent=w1").Fails(t, 5, "conflict.tree_stale").Stderr
			}
			require.NotContains(t, human, prune, "nothing left to prune")
			require.Equal(t, []string{"git venom-checkpoint list --agent=w1", "git venom-checkpoint clean --agent=w1"},
				hintCommands(human))
			require.Contains(t, env.run(env.Dir, nil, "sh", "-c", "git venom-checkpoint list --agent=w1").OK(t).Stdout, "k1")
			// Another agent of the main worktree is not held up by it.
			env.Write("a.txt", "x\n")
			require.Equal(t, "k1", *env.Take(t, "--agent=m1").Checkpoint)
			env.run(env.Dir, nil, "sh", "-c", "git venom-checkpoint clean --agent=w1").OK(t)
			require.Contains(t, env.Records("agent.archived")[0], "agent")
			require.Equal(t, "w1", env.Records("agent.archived")[0]["agent"])
		})
	}
}

func TestCheckpoint_WhichAgent(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// No agent yet and none named.
	env.Venom("checkpoint", "--json").Fails(t, 2, "invalid_params.agent")
	require.Empty(t, env.LogRecords())
	// VENOM_AGENT names one (docs/checkpoints.md#names).
	r := env.VenomIn(env.Dir, []string{"VENOM_AGENT=a1"}, "checkpoint", "--json").OK(t)
	var res TakeResult
	r.JSON(t, &res)
	require.Equal(t, "a1", res.Agent)
	env.VenomIn(env.Dir, []string{"VENOM_AGENT=Bad"}, "checkpoint", "--json").Fails(t, 2, "invalid_params.agent")
	// The only agent is the default.
	env.Write("a.txt", "x\n")
	require.Equal(t, "a1", env.Take(t).Agent)
	require.Equal(t, "a1", env.List(t).Agent)
	// --agent wins over VENOM_AGENT.
	r = env.VenomIn(env.Dir, []string{"VENOM_AGENT=a1"}, "checkpoint", "--agent=b2", "--json").OK(t)
	r.JSON(t, &res)
	require.Equal(t, "b2", res.Agent)
	// Two agents: one must be named.
	r = env.Venom("checkpoint", "--json")
	r.Fails(t, 2, "invalid_params.agent")
	require.JSONEq(t, `{"agents":["a1","b2"]}`, string(ErrorOf(t, r).Error.Data))
	env.Venom("checkpoint", "list", "--json").Fails(t, 2, "invalid_params.agent")
}

// TestCheckpoint_TooLargeCountsOnlyWhatIsNotHeld: venom.maxTotalBytes is
// about what a capture would store. Files the agent's last checkpoint
// holds, unchanged since (its stat data says so), are not new: 800 bytes
// held and 300 new pass a limit of 1000, and a failure counts the new.
func TestCheckpoint_TooLargeCountsOnlyWhatIsNotHeld(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	env.SetGlobal("venom.maxTotalBytes", "1000")
	env.Write("held.bin", strings.Repeat("h", 800))
	carryCapture(t, env, extra, timings)
	env.Write("new.bin", strings.Repeat("n", 300))
	_, stored := carryCapture(t, env, extra, timings)
	assert.NotEqual(t, -1, stored, "the capture carried held.bin")
	assert.Equal(t, strings.Repeat("n", 300), env.Git("show", "refs/venom/checkpoints/a1/2:new.bin"))
	assert.Equal(t, strings.Repeat("h", 800), env.Git("show", "refs/venom/checkpoints/a1/2:held.bin"))

	env.Write("big.bin", strings.Repeat("b", 1200))
	time.Sleep(60 * time.Millisecond)
	r := env.VenomIn(env.Dir, extra, "checkpoint", "--agent=a1", "--json")
	r.Fails(t, 1, "failed.checkpoint_too_large")
	var data struct {
		Bytes   int64         `json:"bytes"`
		Largest []SkippedPath `json:"largest"`
	}
	require.NoError(t, json.Unmarshal(ErrorOf(t, r).Error.Data, &data))
	assert.Equal(t, int64(1200), data.Bytes, "only big.bin is new")
	assert.Equal(t, []SkippedPath{{Path: "big.bin", Bytes: 1200}}, data.Largest)
}
