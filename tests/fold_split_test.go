package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fold snapshot is split (lib/state/snapshot.go): fold.json holds what
// every command reads of every agent, fold.d/<agent>.json each agent's
// turns and checkpoints with a mark of its own. A command about one agent
// reads fold.json, that agent's file and the records after the marks.
// Whatever state the files are in, every command answers as a fold of the
// whole log does.

// splitHistory plays turns of three agents on one tree (a1, a2 share it)
// and a manual checkpoint of a third, with snapshots written at every
// capture, and ends with a commit for explain.
func splitHistory(t *testing.T, env *Env, from, turns int) {
	t.Helper()
	for i := from; i < from+turns; i++ {
		for _, a := range []string{"a1", "a2"} {
			env.Turn(a, func() { env.Write(a+".txt", fmt.Sprintf("%s turn %d\n", a, i)) })
			env.Tick()
		}
	}
	env.Write("b.txt", fmt.Sprintf("b %d\n", from))
	env.Take(t, "--agent=b1")
	env.Tick()
}

// splitViews are the commands whose output is the fold: the listings of
// each agent, the agents, doctor and explain.
func splitViews(t *testing.T, env *Env) []string {
	t.Helper()
	var out []string
	for _, args := range [][]string{
		{"list", "--agent=a1", "--json"},
		{"list", "--agent=a2", "--json"},
		{"list", "--agent=b1", "--json"},
		{"list", "--agent=a2", "--turn=t2", "--json"},
		{"agents", "--json"},
		{"agents"},
		{"doctor", "--json"},
		{"explain", "--json", "HEAD"},
		{"list"},
	} {
		r := env.Venom("checkpoint", args...)
		out = append(out, fmt.Sprintf("%v -> exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr))
	}
	// Last, as it holds the lock and may write the snapshot: what a
	// prune keeping one checkpoint an agent would take.
	r := keepOne(t, env).Venom("checkpoint", "prune", "--dry-run", "--json")
	return append(out, fmt.Sprintf("prune --dry-run -> exit %d\n%s%s", r.Code, r.Stdout, r.Stderr))
}

// keepOne is env with venom.keep 1, in a global config of its own.
func keepOne(t *testing.T, env *Env) *Env {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	data, err := os.ReadFile(filepath.Join(env.Home, ".gitconfig"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, append(data, "[venom]\n\tkeep = 1\n"...), 0o644))
	return env.With("GIT_CONFIG_GLOBAL=" + cfg)
}

func TestFoldSplit_CommandsAnswerAsTheWholeLog(t *testing.T) {
	t.Parallel()
	env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1")
	env.SetGlobal("venom.keep", "3")
	splitHistory(t, env, 0, 3)
	dir := filepath.Join(env.StateDir(), "fold.d")
	older, err := os.ReadFile(filepath.Join(dir, "a2.json"))
	require.NoError(t, err, "each agent has its own file")
	splitHistory(t, env, 3, 3)
	env.Commit("after the turns")
	for _, a := range []string{"a1", "a2", "b1"} {
		require.FileExists(t, filepath.Join(dir, a+".json"))
	}
	with := splitViews(t, env)

	// The reference: no snapshot at all, the whole log folded.
	aside := t.TempDir()
	require.NoError(t, os.Rename(filepath.Join(env.StateDir(), "fold.json"), filepath.Join(aside, "fold.json")))
	require.NoError(t, os.Rename(dir, filepath.Join(aside, "fold.d")))
	whole := splitViews(t, env)
	restore := func() {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, copyTree(filepath.Join(aside, "fold.d"), dir))
		data, err := os.ReadFile(filepath.Join(aside, "fold.json"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(env.StateDir(), "fold.json"), data, 0o644))
	}
	for i := range whole {
		assert.Equal(t, whole[i], with[i], "with the split snapshot")
	}

	for name, spoil := range map[string]func(){
		"agents' files deleted": func() { require.NoError(t, os.RemoveAll(dir)) },
		"one agent's file deleted": func() {
			require.NoError(t, os.Remove(filepath.Join(dir, "a1.json")))
		},
		"fold.json deleted": func() { require.NoError(t, os.Remove(filepath.Join(env.StateDir(), "fold.json"))) },
		"an agent's file of an older mark": func() {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a2.json"), older, 0o644))
		},
	} {
		restore()
		spoil()
		got := splitViews(t, env)
		for i := range whole {
			assert.Equal(t, whole[i], got[i], name)
		}
	}

	// A torn last line (a writer killed mid-write) is ignored by every
	// read, with the snapshot and without.
	restore()
	log := filepath.Join(env.StateDir(), "log.jsonl")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":99999,"ts":"2026-12-05T00:00:00.000Z","type":"checkpoint.taken","agent":"a2","checkp`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	torn := splitViews(t, env)
	require.NoError(t, os.Rename(filepath.Join(env.StateDir(), "fold.json"), filepath.Join(t.TempDir(), "fold.json")))
	require.NoError(t, os.RemoveAll(dir))
	tornWhole := splitViews(t, env)
	for i := range torn {
		assert.Equal(t, tornWhole[i], torn[i], "with a torn last line")
	}
	// The next writer cuts the torn line and goes on.
	env.Write("a1.txt", "after the tear\n")
	env.Take(t, "--agent=a1")
	env.AssertSeqGapless(t)
	assert.NotContains(t, env.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/a2/"), "99999")
}

// copyTree copies the regular files of folder from into a new folder to.
func copyTree(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestFoldSplit_HookReadsItsAgentOnly: with many agents, each with live
// checkpoints, a hook of one agent reads fold.json and that agent's file,
// and no other agent's: the bytes of snapshot it reads are its own
// agent's and the all-agents part, not the others' checkpoints
// (VENOM_TEST_TIMINGS counts what lib/state reads).
func TestFoldSplit_HookReadsItsAgentOnly(t *testing.T) {
	t.Parallel()
	env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1")
	agents := []string{"a1", "a2", "a3", "a4", "a5", "a6"}
	for i := 0; i < 4; i++ {
		for _, a := range agents {
			env.Turn(a, func() { env.Write(a+".txt", fmt.Sprintf("%s %d\n", a, i)) }, "--isolation=worktree")
			env.Tick()
		}
	}
	// A lock holder of every agent brings every file to the last mark.
	env.Venom("checkpoint", "prune").OK(t)
	dir := filepath.Join(env.StateDir(), "fold.d")
	sizes := map[string]int64{}
	var others int64
	for _, a := range agents {
		fi, err := os.Stat(filepath.Join(dir, a+".json"))
		require.NoError(t, err)
		sizes[a] = fi.Size()
		if a != "a3" {
			others += fi.Size()
		}
	}
	all, err := os.Stat(filepath.Join(env.StateDir(), "fold.json"))
	require.NoError(t, err)

	timings := filepath.Join(t.TempDir(), "timings")
	env.Write("a3.txt", "hook\n")
	hook := env.With("VENOM_TEST_TIMINGS="+timings, "VENOM_AGENT=a3")
	hook.Hook("claude-code", hook.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
	counts := readCounts(t, timings)
	assert.Equal(t, 1, counts["fold-read-all"], "fold.json read once")
	assert.Equal(t, 1, counts["fold-read-agent"], "one agent's file read: its own")
	assert.Equal(t, all.Size()+sizes["a3"], int64(counts["fold-bytes-read"]),
		"the bytes read are fold.json's and a3's file's, none of the %d bytes of the others'", others)
	l := env.List(t, "--agent=a3")
	assert.Equal(t, "turn_start", l.Checkpoints[0].Reason, "the hook took its checkpoint")

	// list of one agent reads the same.
	require.NoError(t, os.Remove(timings))
	env.VenomIn(env.Dir, []string{"VENOM_TEST_TIMINGS=" + timings}, "checkpoint", "list", "--agent=a5", "--json").OK(t)
	counts = readCounts(t, timings)
	assert.Equal(t, 1, counts["fold-read-agent"], "list --agent reads its agent's file only")
}

// TestFoldSplit_EveryAgentsViewReadsNoAgentFile: agents, list without
// --agent and prune --dry-run read each agent's stub in fold.json (its
// live checkpoints summed up there) and no agent's own file, and answer
// as the whole log does. With two thousand agents, reading every file
// cost each of them 25-35 s.
func TestFoldSplit_EveryAgentsViewReadsNoAgentFile(t *testing.T) {
	t.Parallel()
	env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1")
	agents := []string{"a1", "a2", "a3", "a4"}
	for i := 0; i < 3; i++ {
		for _, a := range agents {
			env.Turn(a, func() { env.Write(a+".txt", fmt.Sprintf("%s %d\n", a, i)) }, "--isolation=worktree")
			env.Tick()
		}
	}
	// One prune of a3 and a4's last capture after fold.json's mark: the
	// stubs fold them in.
	one := keepOne(t, env)
	one.Venom("checkpoint", "prune", "--agent=a3").OK(t)
	env.Write("a4.txt", "manual\n")
	env.Take(t, "--agent=a4")
	views := func(e *Env) []string {
		var out []string
		for _, args := range [][]string{{"agents", "--json"}, {"agents"}, {"list"}, {"prune", "--dry-run", "--json"}} {
			r := e.Venom("checkpoint", args...)
			out = append(out, fmt.Sprintf("%v -> exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr))
		}
		return out
	}
	timings := filepath.Join(t.TempDir(), "timings")
	got := views(one.With("VENOM_TEST_TIMINGS=" + timings))
	counts := readCounts(t, timings)
	assert.Equal(t, 4, counts["fold-read-all"], "fold.json read by each")
	assert.Zero(t, counts["fold-read-agent"], "no agent's own file read")
	assert.Contains(t, got[3], `{"agent":"a4","repo":".","pruned":["k1","k2","k3","k4","k5"]`, "a dry run says what goes")

	aside := t.TempDir()
	require.NoError(t, os.Rename(filepath.Join(env.StateDir(), "fold.json"), filepath.Join(aside, "fold.json")))
	require.NoError(t, os.Rename(filepath.Join(env.StateDir(), "fold.d"), filepath.Join(aside, "fold.d")))
	whole := views(one.With("VENOM_TEST_FOLD_EVERY=1000000"))
	for i := range whole {
		assert.Equal(t, whole[i], got[i], "as the whole log")
	}
}

// readCounts sums the counters of a VENOM_TEST_TIMINGS file by name.
func readCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "%s %d", &name, &n); err == nil {
			out[name] += n
		}
	}
	return out
}
