package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRollback_Preflight reaches each row of docs/errors.md#codes that preflight gives,
// with its exit code, and checks nothing was written.
func TestRollback_Preflight(t *testing.T) {
	t.Parallel()
	type tc struct {
		setup func(t *testing.T, env *Env) []string // extra environment
		args  []string
		real  bool // the real call (with a plan from a dry run the setup allows)
		exit  int
		code  string
	}
	gitFile := func(name string) func(t *testing.T, env *Env) []string {
		return func(t *testing.T, env *Env) []string {
			p := filepath.Join(env.Dir, ".git", name)
			if filepath.Ext(name) == "" && (name == "rebase-merge" || name == "rebase-apply") {
				require.NoError(t, os.MkdirAll(p, 0o755))
			} else {
				require.NoError(t, os.WriteFile(p, []byte(env.Git("rev-parse", "HEAD")+"\n"), 0o644))
			}
			return nil
		}
	}
	cases := map[string]tc{
		"not_found.agent":            {args: []string{"--agent=zz"}, exit: 3, code: "not_found.agent"},
		"not_found.checkpoint never": {args: []string{"--checkpoint=k9"}, exit: 3, code: "not_found.checkpoint"},
		"not_found.checkpoint pruned": {setup: func(t *testing.T, env *Env) []string {
			env.AppendLog("checkpoint.pruned", map[string]any{"agent": "a1", "checkpoints": []string{"k1"}})
			return nil
		}, exit: 3, code: "not_found.checkpoint"},
		"not_found.checkpoint ref deleted": {setup: func(t *testing.T, env *Env) []string {
			env.Git("update-ref", "-d", "refs/venom/checkpoints/a1/1")
			return nil
		}, exit: 3, code: "not_found.checkpoint"},
		"not_found.checkpoint ref moved": {setup: func(t *testing.T, env *Env) []string {
			env.Git("update-ref", "refs/venom/checkpoints/a1/1", "HEAD")
			return nil
		}, exit: 3, code: "not_found.checkpoint"},
		"denied.agent_caller guarded": {setup: func(t *testing.T, env *Env) []string {
			return []string{"VENOM_CALLER=agent"}
		}, args: []string{"--outside=overwrite"}, real: true, exit: 4, code: "denied.agent_caller"},
		"denied.agent_caller itself": {setup: func(t *testing.T, env *Env) []string {
			return []string{"CLAUDECODE=1", "VENOM_AGENT=a1"}
		}, args: []string{"--agent=a1", "--isolation-worktree"}, real: true, exit: 4, code: "denied.agent_caller"},
		"conflict.invalid_transition": {setup: func(t *testing.T, env *Env) []string {
			env.AppendLog("agent.archived", map[string]any{"agent": "a1"})
			return nil
		}, args: []string{"--agent=a1"}, exit: 5, code: "conflict.invalid_transition"},
		"conflict.handed_over": {setup: func(t *testing.T, env *Env) []string {
			env.Venom("checkpoint", "--agent=a1", "--reason=takeover", "--json").OK(t)
			return nil
		}, exit: 5, code: "conflict.handed_over"},
		"conflict.turn_running": {setup: func(t *testing.T, env *Env) []string {
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
			return nil
		}, exit: 5, code: "conflict.turn_running"},
		"conflict.rollback_running": {setup: func(t *testing.T, env *Env) []string {
			plan := env.DryRun("--checkpoint=k1", "--outside=overwrite").Plan
			env.StartPaused("rollback-after-safety", nil, "rollback", "--checkpoint=k1", "--outside=overwrite", "--plan="+plan)
			return nil
		}, exit: 5, code: "conflict.rollback_running"},
		"conflict.checkpoint_pending": {setup: func(t *testing.T, env *Env) []string {
			env.StartPaused("capture-scan", nil, "checkpoint", "--agent=a1")
			return nil
		}, exit: 5, code: "conflict.checkpoint_pending"},
		"conflict.live_children": {setup: func(t *testing.T, env *Env) []string {
			env.Venom("checkpoint", "--agent=c1", "--parent=a1", "--reason=turn_start", "--json").OK(t)
			return nil
		}, args: []string{"--agent=a1"}, exit: 5, code: "conflict.live_children"},
		"conflict.tree_shared": {setup: func(t *testing.T, env *Env) []string {
			env.Venom("checkpoint", "--agent=a2", "--reason=turn_start", "--json").OK(t)
			return nil
		}, args: []string{"--agent=a1"}, exit: 5, code: "conflict.tree_shared"},
		"conflict.git_operation merge":       {setup: gitFile("MERGE_HEAD"), exit: 5, code: "conflict.git_operation"},
		"conflict.git_operation rebase":      {setup: gitFile("rebase-merge"), exit: 5, code: "conflict.git_operation"},
		"conflict.git_operation cherry-pick": {setup: gitFile("CHERRY_PICK_HEAD"), exit: 5, code: "conflict.git_operation"},
		"conflict.git_operation revert":      {setup: gitFile("REVERT_HEAD"), exit: 5, code: "conflict.git_operation"},
		"conflict.git_operation bisect":      {setup: gitFile("BISECT_LOG"), exit: 5, code: "conflict.git_operation"},
		"unsupported.harness_capability": {setup: func(t *testing.T, env *Env) []string {
			env.Turn("a1", func() { env.Write("src/main.txt", "v3\n") })
			return nil
		}, args: []string{"--checkpoint=k2", "--restore=all"}, exit: 10, code: "unsupported.harness_capability"},
		"conflict.checkpoint_files_only": {setup: func(t *testing.T, env *Env) []string {
			return nil
		}, args: []string{"--checkpoint=k3", "--restore=all"}, exit: 5, code: "conflict.checkpoint_files_only"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			isolation := "in_place"
			args := []string{}
			for _, a := range c.args {
				if a == "--isolation-worktree" {
					isolation = "worktree"
					continue
				}
				args = append(args, a)
			}
			if name == "unsupported.harness_capability" || name == "conflict.checkpoint_files_only" {
				// These are about a conversation: an agent of harness
				// none has none, and restores its files whatever.
				env.RegisterAs("a1", "claude-code", isolation)
			}
			// a1: k1 turn_start of t1, k2 a mid-turn manual one, t1 ends at k3... see below.
			env.Venom("checkpoint", "--agent=a1", "--isolation="+isolation, "--reason=turn_start", "--json").OK(t) // k1
			env.Write("src/main.txt", "v2\n")
			if name == "conflict.checkpoint_files_only" {
				// A fresh agent whose first turn has a mid-turn checkpoint: through_turn null.
				env.Write("src/x.txt", "mid\n")
				env.Venom("checkpoint", "--agent=a1", "--reason=manual", "--json").OK(t) // k2, mid_turn
				env.Write("src/x.txt", "more\n")
				env.Venom("checkpoint", "--agent=a1", "--reason=manual", "--json").OK(t) // k3, mid_turn
			}
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
			var extra []string
			if c.setup != nil {
				extra = c.setup(t, env)
			}
			hasCk := false
			for _, a := range args {
				if len(a) > 13 && a[:13] == "--checkpoint=" {
					hasCk = true
				}
			}
			if !hasCk {
				args = append(args, "--checkpoint=k1")
			}
			snap := env.Snapshot()
			logLen := len(env.LogRecords())
			if c.real {
				plan := env.DryRun(args...).Plan
				env.VenomIn(env.Dir, extra, "rollback", append(args, "--plan="+plan, "--json")...).Fails(t, c.exit, c.code)
			} else {
				env.VenomIn(env.Dir, extra, "rollback", append(args, "--dry-run", "--json")...).Fails(t, c.exit, c.code)
				env.VenomIn(env.Dir, extra, "rollback", append(args, "--plan=p1-0000000000000000", "--json")...).
					Fails(t, c.exit, c.code)
			}
			env.AssertUntouched(t, snap)
			if name != "conflict.rollback_running" {
				require.Equal(t, logLen, len(env.LogRecords()), "a refused rollback logged something")
			}
		})
	}
}

// TestRollback_AgentCallerMayRollBackItsDescendant: an agent caller may
// really roll back its own child's unguarded tree (docs/rollback.md#grants).
func TestRollback_AgentCallerMayRollBackItsDescendant(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=p1", "--json").OK(t)
	wt := filepath.Join(env.Root, "child")
	env.Git("worktree", "add", "-q", "-b", "child", wt)
	env.VenomIn(wt, nil, "checkpoint", "--agent=c1", "--parent=p1", "--isolation=worktree", "--json").OK(t)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "new.txt"), []byte("x\n"), 0o644))
	agent := []string{"CLAUDECODE=1", "VENOM_AGENT=p1"}
	var dry RollbackResult
	env.VenomIn(wt, agent, "rollback", "--agent=c1", "--checkpoint=k1", "--dry-run", "--json").OK(t).JSON(t, &dry)
	env.VenomIn(wt, agent, "rollback", "--agent=c1", "--checkpoint=k1", "--plan="+dry.Plan, "--json").OK(t)
	_, err := os.Stat(filepath.Join(wt, "new.txt"))
	require.True(t, os.IsNotExist(err))
	// The child itself may not (it is not its own descendant); neither may a stranger.
	require.NoError(t, os.WriteFile(filepath.Join(wt, "new.txt"), []byte("x\n"), 0o644))
	env.VenomIn(wt, []string{"CODEX_THREAD_ID=x", "VENOM_AGENT=c1"}, "rollback", "--agent=c1", "--checkpoint=k1",
		"--plan="+dry.Plan, "--json").Fails(t, 4, "denied.agent_caller")
	env.VenomIn(wt, []string{"CODEX_SANDBOX=seatbelt"}, "rollback", "--agent=c1", "--checkpoint=k1",
		"--plan="+dry.Plan, "--json").Fails(t, 4, "denied.agent_caller")
}
