package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newAgent registers a1 with its first checkpoint k1 (a turn_start of t1),
// runs the turn's work, and ends it (k2).
func newAgent(t *testing.T, isolation string, work func(env *Env)) *Env {
	t.Helper()
	env := NewEnv(t)
	env.Write("src/main.txt", "v1\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation="+isolation, "--reason=turn_start", "--json").OK(t)
	work(env)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	return env
}

func TestRollback_DryRunWritesNothing(t *testing.T) {
	t.Parallel()
	env := newAgent(t, "worktree", func(env *Env) { env.Write("src/main.txt", "v2\n") })
	env.Write("notes.txt", "a person's note\n")
	snap := env.Snapshot()
	logBefore := env.LogRecords()
	refsBefore := env.Git("for-each-ref", "refs/venom")
	common := env.CommonDir()
	stateBefore, _ := os.ReadDir(filepath.Join(common, "venom"))

	res := env.DryRun("--checkpoint=k1")

	env.AssertUntouched(t, snap)
	require.Equal(t, logBefore, env.LogRecords(), "a dry run logged something")
	require.Equal(t, refsBefore, env.Git("for-each-ref", "refs/venom"))
	stateAfter, _ := os.ReadDir(filepath.Join(common, "venom"))
	require.Equal(t, len(stateBefore), len(stateAfter), "a dry run left a file in the state folder")
	require.Equal(t, map[string]string{"src/main.txt": "turn", "notes.txt": "outside"}, res.Classes())
	require.Equal(t, false, *res.Guarded)
	require.Equal(t, ".", res.Repos[0].Repo)
	require.Equal(t, env.Dir, res.Repos[0].Path)
	// The same state gives the same plan; any change gives another.
	require.Equal(t, res.Plan, env.DryRun("--checkpoint=k1").Plan)
	require.NotEqual(t, res.Plan, env.DryRun("--checkpoint=k1", "--restore=files").Plan)
	require.NotEqual(t, res.Plan, env.DryRun("--checkpoint=k1", "--outside=overwrite").Plan)
	require.NotEqual(t, res.Plan, env.DryRun("--checkpoint=k1", "--keep-head").Plan)
	env.Write("notes.txt", "changed\n")
	require.NotEqual(t, res.Plan, env.DryRun("--checkpoint=k1").Plan)
}

func TestRollback_PlanIsTheDigest(t *testing.T) {
	t.Parallel()
	env := newAgent(t, "worktree", func(env *Env) { env.Write("src/main.txt", "v2\n") })
	res := env.DryRun("--checkpoint=k1", "--restore=files")
	tree := env.RecipeTree()
	head := env.Git("rev-parse", "HEAD")
	doc := `{"checkpoint":"k1","restore":"files","outside":null,"keep_head":false,"repos":[{"repo":".","tree":"` +
		tree + `","head":"` + head + `"}]}`
	require.Equal(t, "p1-"+sha256hex(doc)[:16], res.Plan)
	res = env.DryRun("--checkpoint=k1", "--outside=keep", "--keep-head")
	doc = `{"checkpoint":"k1","restore":"all","outside":"keep","keep_head":true,"repos":[{"repo":".","tree":"` +
		tree + `","head":"` + head + `"}]}`
	require.Equal(t, "p1-"+sha256hex(doc)[:16], res.Plan)
}

func TestRollback_RealCallRestoresAndLogs(t *testing.T) {
	t.Parallel()
	env := newAgent(t, "worktree", func(env *Env) {
		env.Write("src/main.txt", "v2\n")
		env.Write("gen/out.txt", "generated\n")
	})
	k1 := env.CheckpointTree("a1", 1)
	plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
	var res RollbackResult
	env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json").OK(t).JSON(t, &res)
	require.Equal(t, "k3", res.Safety)
	require.Equal(t, "k4", res.After)
	require.True(t, *res.Exact)
	require.Equal(t, k1, env.RecipeTree())
	require.Equal(t, "v1\n", env.Read("src/main.txt"))
	_, err := os.Lstat(env.Path("gen"))
	require.True(t, os.IsNotExist(err), "the emptied folder stays")
	// The safety checkpoint holds S, the rollback checkpoint what came out.
	require.Equal(t, k1, env.CheckpointTree("a1", 4))
	var types []string
	for _, r := range env.LogRecords()[len(env.LogRecords())-4:] {
		types = append(types, r["type"].(string)+"/"+str(r["reason"]))
	}
	require.Equal(t, []string{"checkpoint.taken/pre_rollback", "rollback.started/", "checkpoint.taken/rollback",
		"rollback.ended/"}, types)
	started := env.Records("rollback.started")[0]
	require.Equal(t, map[string]any{"seq": started["seq"], "ts": started["ts"], "type": "rollback.started",
		"agent": "a1", "checkpoint": "k1", "safety": "k3", "restore": "files", "plan": started["plan"]}, started)
	ended := env.Records("rollback.ended")[0]
	require.Equal(t, true, ended["ok"])
	require.Equal(t, "k4", ended["after"])
	// After: the rollback capture always gets its own record (never reused).
	require.Len(t, env.Records("checkpoint.reused"), 0)
	// A second real call with the same plan is stale: the state moved on.
	env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json").
		Fails(t, 5, "conflict.rollback_stale")
}

func TestRollback_HumanLine(t *testing.T) {
	t.Parallel()
	env := newAgent(t, "worktree", func(env *Env) { env.Write("src/main.txt", "v2\n") })
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Write("src/main.txt", "v3\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	plan := env.DryRun("--checkpoint=k2", "--restore=files").Plan
	r := env.Venom("rollback", "--checkpoint=k2", "--restore=files", "--plan="+plan).OK(t)
	// Harness none: no word about a conversation; the undo is a command.
	require.Equal(t, "Worktree:\n  "+env.Dir+"\n↺ Rolled back to k2 (after t1) · 1 file · safety k4\n  undo: git venom-rollback --undo\n", r.Stdout)
	r = env.Venom("rollback", "--checkpoint=k2", "--restore=files", "--dry-run").OK(t)
	require.Contains(t, r.Stdout, "Plan p1-")
}

func TestRollback_PlanFlags(t *testing.T) {
	t.Parallel()
	env := newAgent(t, "worktree", func(env *Env) { env.Write("src/main.txt", "v2\n") })
	snap := env.Snapshot()
	env.Venom("rollback", "--checkpoint=k1", "--json").Fails(t, 2, "invalid_params.plan")
	env.Venom("rollback", "--checkpoint=k1").Fails(t, 2, "invalid_params.plan") // not a terminal
	env.Venom("rollback", "--checkpoint=k1", "--dry-run", "--plan=p1-0000000000000000", "--json").
		Fails(t, 2, "invalid_params.plan")
	env.Venom("rollback", "--checkpoint=k1", "--plan=p1-0000000000000000", "--json").
		Fails(t, 5, "conflict.rollback_stale")
	env.Venom("rollback", "--checkpoint=x1", "--dry-run", "--json").Fails(t, 2, "invalid_params.checkpoint")
	env.Venom("rollback", "--checkpoint=k1", "--dry-run=true", "--json").OK(t)
	env.AssertUntouched(t, snap)
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func TestRollback_ClassesOutsideAgentTurn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "1\n")
	env.Write("b.txt", "1\n")
	env.Write("c.txt", "1\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t) // k1, t1
	env.Write("a.txt", "agent\n")
	env.Write("b.txt", "command\n")
	env.AppendLog("edit.recorded", map[string]any{"agent": "a1", "turn": "t1", "paths": []string{"a.txt"}})
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t) // k2
	env.Write("c.txt", "person\n")
	res := env.DryRun("--checkpoint=k1", "--outside=keep")
	require.Equal(t, map[string]string{"a.txt": "agent", "b.txt": "turn"}, res.Classes())
	require.Equal(t, map[string]string{"c.txt": "outside"}, res.LeftReasons())
	require.True(t, *res.Guarded)
	// In a guarded tree outside paths are refused by default, with the paths.
	r := env.Venom("rollback", "--checkpoint=k1", "--dry-run", "--json").Fails(t, 5, "conflict.outside_edits")
	require.JSONEq(t, `{"repos":[{"repo":".","paths":["c.txt"]}]}`, dataOf(t, r))
	// keep leaves them; the rest is restored.
	env.Rollback("--checkpoint=k1", "--outside=keep", "--restore=files")
	require.Equal(t, "1\n", env.Read("a.txt"))
	require.Equal(t, "1\n", env.Read("b.txt"))
	require.Equal(t, "person\n", env.Read("c.txt"))
}

func dataOf(t *testing.T, r Result) string {
	t.Helper()
	m := r.Map(t)
	b, err := jsonMarshal(m["error"].(map[string]any)["data"])
	require.NoError(t, err)
	return string(b)
}

func TestRollback_OutsideDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		isolation, outside string
		refused            bool
	}{
		{"in_place", "", true},
		{"worktree", "", false},
		{"worktree", "refuse", true}, // docs/rollback.md#outside-edits
		{"in_place", "overwrite", false},
	} {
		t.Run(tc.isolation+"/"+tc.outside, func(t *testing.T) {
			t.Parallel()
			env := newAgent(t, tc.isolation, func(env *Env) { env.Write("src/main.txt", "v2\n") })
			env.Write("README.md", "person\n")
			args := []string{"--checkpoint=k1", "--restore=files"}
			if tc.outside != "" {
				args = append(args, "--outside="+tc.outside)
			}
			r := env.Venom("rollback", append(args, "--dry-run", "--json")...)
			if tc.refused {
				r.Fails(t, 5, "conflict.outside_edits")
				return
			}
			plan := r.OK(t).Map(t)["plan"].(string)
			env.Venom("rollback", append(args, "--plan="+plan, "--json")...).OK(t)
			require.Equal(t, "hello\n", env.Read("README.md"))
		})
	}
}

func TestRollback_GapsMakeOutside(t *testing.T) {
	t.Parallel()
	// Each case makes the window where b.txt changed a gap.
	cases := map[string]func(env *Env){
		"failed capture": func(env *Env) {
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
			env.Write("b.txt", "2\n")
			env.VenomIn(env.Dir, []string{"VENOM_TEST_FAIL_AT=capture-scan"}, "checkpoint", "--agent=a1",
				"--reason=turn_end", "--json")
			env.Venom("checkpoint", "--agent=a1", "--reason=manual", "--json").OK(t)
		},
		"take-over": func(env *Env) {
			env.Venom("checkpoint", "--agent=a1", "--reason=takeover", "--json").OK(t)
			env.Write("b.txt", "2\n")
			env.Venom("checkpoint", "--agent=a1", "--reason=takeback", "--json").OK(t)
		},
		"turn with no turn_start": func(env *Env) {
			env.Write("b.txt", "2\n")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
		},
		"another agent's turn": func(env *Env) {
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
			env.Venom("checkpoint", "--agent=a2", "--reason=turn_start", "--json").OK(t)
			env.Write("b.txt", "2\n")
			env.Venom("checkpoint", "--agent=a2", "--reason=turn_end", "--json").OK(t)
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
		},
		"pruned checkpoint": func(env *Env) {
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t) // k2
			env.Write("b.txt", "2\n")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t) // k3
			env.Git("update-ref", "-d", "refs/venom/checkpoints/a1/2")
			env.AppendLog("checkpoint.pruned", map[string]any{"agent": "a1", "checkpoints": []string{"k2"}})
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("a.txt", "1\n")
			env.Write("b.txt", "1\n")
			env.Commit("base")
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t) // k1
			mk(env)
			// A turn window of a1 that changes a.txt, so not everything is outside.
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
			env.Write("a.txt", "2\n")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
			res := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
			require.Equal(t, map[string]string{"a.txt": "turn", "b.txt": "outside"}, res.Classes())
		})
	}
}

func TestRollback_SharersAndNotes(t *testing.T) {
	t.Parallel()
	env := newAgent(t, "worktree", func(env *Env) { env.Write("src/main.txt", "v2\n") })
	env.Venom("checkpoint", "--agent=a2", "--json").OK(t) // a2 shares the tree: guarded
	res := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
	require.True(t, *res.Guarded)
	require.Equal(t, []string{"a2"}, res.SharedWith)
	env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
	ended := env.Records("rollback.ended")
	require.Len(t, ended, 1)
	require.Equal(t, "files", ended[0]["restore"])
}

func TestRollback_IgnoredEdits(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".gitignore", "*.log\n")
	env.Commit("ignore")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("x.log", "edited\n")
	env.AppendLog("edit.recorded", map[string]any{"agent": "a1", "turn": "t1", "paths": []string{}, "ignored": []string{"x.log"}})
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	res := env.DryRun("--checkpoint=k1", "--restore=files")
	require.Equal(t, []string{"x.log"}, res.Repos[0].IgnoredEdits)
	env.Rollback("--checkpoint=k1", "--restore=files")
	require.Equal(t, "edited\n", env.Read("x.log"), "an ignored file was touched")
}

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

var _ = assert.Equal

// TestRollback_ConversationGoesWithTheFiles: restore=all back to before the
// first turn drops the turns and rewinds the conversation to a new, empty
// session, named at once and bound, never an empty binding (docs/rollback.md#conversation,
// docs/checkpoints.md#invariants 5);
// back to the latest turn there is nothing to rewind.
// The agent has a harness: one of harness none has no conversation.
func TestRollback_ConversationGoesWithTheFiles(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("src/main.txt", "v1\n")
	env.Commit("base")
	env.RegisterAs("a1", "claude-code", "worktree")
	env.Turn("a1", func() { env.Write("src/main.txt", "v2\n") })
	env.Write("src/main.txt", "after t1\n")
	res := env.DryRun("--checkpoint=k2")
	require.False(t, res.Conversation.Rewinds)
	require.Equal(t, []string{}, res.Conversation.Drops)
	require.Equal(t, "t1", *res.Conversation.ThroughTurn)

	conv := env.RollbackConv("--checkpoint=k1").Conversation
	require.True(t, conv.Rewinds)
	require.Nil(t, conv.ThroughTurn)
	require.Equal(t, []string{"t1"}, conv.Drops)
	ended := env.Records("rollback.ended")[0]
	require.Equal(t, []any{"t1"}, ended["drops"])
	binding := env.Records("agent.binding")
	require.Len(t, binding, 1)
	fresh := binding[0]["harness_session"].(string)
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, fresh)
	require.Equal(t, fresh, conv.HarnessSession)
	require.Equal(t, []string{"claude", "--session-id", fresh}, conv.Resume)
	after := env.Records("checkpoint.taken")
	require.Nil(t, after[len(after)-1]["through_turn"], "the rollback checkpoint's conversation is before the first turn")
	// Turn numbers go on after a rewind.
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	started := env.Records("turn.started")
	require.Equal(t, "t2", started[len(started)-1]["turn"])
}
