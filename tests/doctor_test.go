package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type doctorReport struct {
	OK     bool `json:"ok"`
	Checks []struct {
		ID      string  `json:"id"`
		Status  string  `json:"status"`
		Message string  `json:"message"`
		Fix     *string `json:"fix"`
	} `json:"checks"`
}

func (r doctorReport) status() map[string]string {
	out := map[string]string{}
	for _, c := range r.Checks {
		out[c.ID] = c.Status
	}
	return out
}

func (r doctorReport) check(t *testing.T, id string) (string, string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			fix := ""
			if c.Fix != nil {
				fix = *c.Fix
			}
			return c.Message, fix
		}
	}
	t.Fatalf("no check %s", id)
	return "", ""
}

var allChecks = []string{"checkpoints.git", "checkpoints.refs", "checkpoints.mirror", "harness.claude-code.rewind",
	"state.log", "state.lock", "state.rollback", "agents.trees", "checkpoints.paths", "checkpoints.symrefs", "harness.codex.hooks",
	"capture.untracked_folders", "config.repository", "harness.opencode.plugin", "harness.qwen-code.hooks",
	"harness.claude-code.hooks", "harness.gemini-cli.hooks"}

func TestDoctor_HealthyRepositoryIsAllOK(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1)
	snap := env.Snapshot()
	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.True(t, rep.OK)
	want := map[string]string{}
	for _, id := range allChecks {
		want[id] = "ok"
	}
	assert.Equal(t, want, rep.status())
	msg, _ := rep.check(t, "harness.claude-code.rewind")
	assert.Equal(t, "no claude-code agent", msg)
	msg, _ = rep.check(t, "checkpoints.refs")
	assert.Equal(t, "2 refs, each named by the log", msg)
	for _, c := range rep.Checks {
		assert.Nil(t, c.Fix, c.ID)
	}
	env.AssertUntouched(t, snap)
	out := env.Venom("checkpoint", "doctor").OK(t).Stdout
	assert.Contains(t, out, "ok  checkpoints.git")
}

func TestDoctor_FindsOrphanMovedRefsAndAMirrorRemote(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1)
	env.TurnN("a1", 2)
	head := env.Git("rev-parse", "HEAD")
	k3 := env.Git("rev-parse", "refs/venom/checkpoints/a1/3")
	env.Git("update-ref", "refs/venom/checkpoints/a1/9", head)     // orphan: no record names it
	env.Git("update-ref", "refs/venom/checkpoints/a1/2", head)     // moved
	env.Git("update-ref", "-d", "refs/venom/checkpoints/a1/3", k3) // gone
	env.Git("remote", "add", "--mirror=push", "backup", filepath.Join(env.Root, "backup.git"))

	var rep doctorReport
	// A logged checkpoint with its ref gone or moved fails the check: exit 1.
	r := env.Venom("checkpoint", "doctor", "--json").Fails(t, 1, "")
	r.JSON(t, &rep)
	assert.False(t, rep.OK)
	st := rep.status()
	assert.Equal(t, "fail", st["checkpoints.refs"])
	assert.Equal(t, "warn", st["checkpoints.mirror"])
	assert.Equal(t, "ok", st["checkpoints.git"])
	msg, fix := rep.check(t, "checkpoints.refs")
	assert.Contains(t, msg, "1 no log record names: refs/venom/checkpoints/a1/9")
	assert.Contains(t, msg, "1 no longer hold the logged commit: refs/venom/checkpoints/a1/2")
	assert.Contains(t, msg, "a1/k3")
	assert.Contains(t, fix, "git update-ref -d refs/venom/checkpoints/a1/9 "+head)
	assert.Contains(t, fix, "git venom-checkpoint prune --agent=a1")

	// The fixes work, checked with plain git and a second doctor.
	for _, f := range strings.Split(fix, "; ") {
		args := strings.Fields(f)
		require.Equal(t, "git", args[0])
		env.Git(args[1:]...)
	}
	_, mfix := rep.check(t, "checkpoints.mirror")
	assert.Equal(t, "git config --unset remote.backup.mirror", mfix)
	env.Git(strings.Fields(mfix)[1:]...)
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["checkpoints.mirror"])
	msg, _ = rep.check(t, "checkpoints.refs")
	assert.NotContains(t, msg, "a1/9")
	assert.NotContains(t, msg, "logged commit")
	assert.NotContains(t, msg, "lost their ref")
	assert.True(t, rep.OK, "every fix applied: %+v", rep.Checks)
	assert.Empty(t, env.GitRaw("for-each-ref", "refs/venom/checkpoints/a1/9").Stdout)
}

func TestDoctor_StateHealthAndKeepAndClaudeVersion(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "--global", "venom.keep", "1")
	for i, c := range []string{"1", "2", "3"} {
		env.Write("f.txt", c)
		env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
		_ = i
	}
	env.AppendLog("agent.registered", map[string]any{"agent": "cc", "tree": env.Dir, "isolation": "worktree",
		"harness": "claude-code", "parent": nil})
	env.AppendLog("turn.ended", map[string]any{"agent": "cc", "turn": "t1", "harness_end": "u1",
		"harness_version": "99.0.0"})
	env.AppendLog("rollback.started", map[string]any{"agent": "a1", "checkpoint": "k1", "safety": "k3",
		"restore": "files", "plan": "p1-0000000000000000"})
	common := env.CommonDir()
	require.NoError(t, os.WriteFile(filepath.Join(common, "venom", "lock"),
		[]byte(`{"op":"checkpoint","agent":"a1","pid":999999,"hostname":"elsewhere","time":"2026-11-30T00:00:00.000Z"}`+"\n"), 0o644))
	f, err := os.OpenFile(env.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, _ = f.WriteString(`{"seq":99,"ts":"x","ty`)
	require.NoError(t, f.Close())

	var rep doctorReport
	r := env.Venom("checkpoint", "doctor", "--json")
	require.Equal(t, 1, r.Code, "a failed check exits 1: %s %s", r.Stdout, r.Stderr)
	r.JSON(t, &rep) // one JSON document even so
	assert.False(t, rep.OK)
	st := rep.status()
	assert.Equal(t, "fail", st["state.rollback"])
	assert.Equal(t, "warn", st["state.log"])
	assert.Equal(t, "warn", st["state.lock"])
	assert.Equal(t, "warn", st["harness.claude-code.rewind"])
	assert.Equal(t, "warn", st["checkpoints.refs"])
	msg, fix := rep.check(t, "checkpoints.refs")
	assert.Contains(t, msg, "more than venom.keep (1): a1 has 3")
	assert.Contains(t, fix, "git venom-checkpoint prune --agent=a1")
	msg, _ = rep.check(t, "harness.claude-code.rewind")
	assert.Contains(t, msg, "cc runs 99.0.0")
	_, fix = rep.check(t, "state.rollback")
	assert.Contains(t, fix, "git venom-rollback --agent=a1 --undo --restore=files --dry-run (back to k3)")

	// Human output: the same, with the fixes, and still exit 1.
	h := env.Venom("checkpoint", "doctor")
	assert.Equal(t, 1, h.Code)
	assert.Contains(t, h.Stdout, "fail  state.rollback")
	assert.Empty(t, h.Stderr)

	// The suggested writer settles the rollback and cuts the torn line.
	env.Venom("checkpoint", "prune", "--json").OK(t)
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["state.rollback"])
	assert.Equal(t, "ok", rep.status()["state.log"])
	assert.Equal(t, "ok", rep.status()["state.lock"])
}

func TestAgents_ListsStateTreeIsolationSharers(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	wt := filepath.Join(env.Root, "wt")
	env.Git("worktree", "add", "-q", "-b", "agent", wt)
	env.VenomIn(wt, nil, "checkpoint", "--agent=w1", "--isolation=worktree", "--json").OK(t)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "x"), []byte("x"), 0o644))
	env.VenomIn(wt, nil, "checkpoint", "--agent=w1", "--json").OK(t)
	env.VenomIn(wt, nil, "checkpoint", "--agent=f1", "--isolation=worktree", "--parent=w1", "--json").OK(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Venom("checkpoint", "--agent=gone", "--json").OK(t)
	env.Venom("checkpoint", "clean", "--agent=gone", "--json").OK(t)

	var res struct {
		Agents []map[string]any `json:"agents"`
	}
	env.Venom("checkpoint", "agents", "--json").OK(t).JSON(t, &res)
	require.Len(t, res.Agents, 4)
	assert.Equal(t, map[string]any{"agent": "w1", "state": "settled", "tree": wt, "isolation": "worktree",
		"harness": "none", "guarded": true, "sharers": []any{"f1"}, "parent": nil, "checkpoint_count": float64(2),
		"newest": "k2"}, res.Agents[0])
	assert.Equal(t, map[string]any{"agent": "f1", "state": "settled", "tree": wt, "isolation": "worktree",
		"harness": "none", "guarded": true, "sharers": []any{"w1"}, "parent": "w1", "checkpoint_count": float64(1),
		"newest": "k1"}, res.Agents[1])
	assert.Equal(t, map[string]any{"agent": "a1", "state": "running", "tree": env.Dir, "isolation": "in_place",
		"harness": "none", "guarded": true, "sharers": []any{}, "parent": nil, "checkpoint_count": float64(1),
		"newest": "k1"}, res.Agents[2])
	assert.Equal(t, "archived", res.Agents[3]["state"])
	assert.Equal(t, float64(0), res.Agents[3]["checkpoint_count"])
	assert.Nil(t, res.Agents[3]["newest"])
	// The refs behind the counts, with plain git.
	assert.Len(t, env.CheckpointRefs("w1"), 2)
	assert.Empty(t, env.CheckpointRefs("gone"))

	// The table fits 80 columns: trees, long paths, go below it with
	// their agents; an archived agent is guarded by nothing.
	out := env.Venom("checkpoint", "agents").OK(t).Stdout
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "/") {
			assert.LessOrEqual(t, len([]rune(l)), 80, "%q", l)
		}
	}
	assert.Regexp(t, `(?m)^w1 +settled +worktree +none +2 +k2 +shared$`, out)
	assert.Regexp(t, `(?m)^a1 +running +in_place +none +1 +k1 +yes$`, out)
	assert.Regexp(t, `(?m)^gone +archived +.* +-$`, out)
	assert.Contains(t, out, "\nTREES\n")
	assert.Contains(t, out, "\n"+wt+"\n  w1, f1\n")
	assert.Contains(t, out, "  a1, gone (archived)\n")
}

// TestAgents_GuardedAsRollbackGuards: the agents listing and a rollback's
// guard read one rule of sharers and guarded trees. Two agents on one
// worktree of their own are both guarded and refuse an agent caller's
// rollback; once one is cleaned, the other is neither, and the same caller
// (its parent) rolls it back.
func TestAgents_GuardedAsRollbackGuards(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=p1", "--json").OK(t)
	wt := filepath.Join(env.Root, "child")
	env.Git("worktree", "add", "-q", "-b", "child", wt)
	for _, id := range []string{"c1", "c2"} {
		env.VenomIn(wt, nil, "checkpoint", "--agent="+id, "--parent=p1", "--isolation=worktree", "--json").OK(t)
	}
	listed := func() map[string]AgentsItem {
		var res struct {
			Agents []AgentsItem `json:"agents"`
		}
		env.Venom("checkpoint", "agents", "--json").OK(t).JSON(t, &res)
		out := map[string]AgentsItem{}
		for _, a := range res.Agents {
			out[a.Agent] = a
		}
		return out
	}
	parent := []string{"VENOM_CALLER=agent", "VENOM_AGENT=p1"}
	rollback := func() Result {
		require.NoError(t, os.WriteFile(filepath.Join(wt, "new.txt"), []byte("x\n"), 0o644))
		var dry RollbackResult
		args := []string{"rollback", "--agent=c1", "--checkpoint=k1", "--outside=overwrite", "--json"}
		env.VenomIn(wt, parent, args[0], append(args[1:], "--dry-run")...).OK(t).JSON(t, &dry)
		return env.VenomIn(wt, parent, args[0], append(args[1:], "--plan="+dry.Plan)...)
	}

	l := listed()
	assert.Equal(t, AgentsItem{Agent: "c1", Guarded: true, Sharers: []string{"c2"}}, l["c1"])
	assert.Equal(t, AgentsItem{Agent: "c2", Guarded: true, Sharers: []string{"c1"}}, l["c2"])
	r := rollback().Fails(t, 4, "denied.agent_caller")
	assert.Contains(t, r.Stdout, "guarded tree")
	assert.Equal(t, "?? new.txt", gitIn(t, env, wt, "status", "--porcelain"))

	env.Venom("checkpoint", "clean", "--agent=c2", "--json").OK(t)
	l = listed()
	assert.Equal(t, AgentsItem{Agent: "c1", Guarded: false, Sharers: []string{}}, l["c1"])
	rollback().OK(t)
	assert.Empty(t, gitIn(t, env, wt, "status", "--porcelain"))
}

// AgentsItem is a row of agents --json, the fields the guard reads.
type AgentsItem struct {
	Agent   string   `json:"agent"`
	Guarded bool     `json:"guarded"`
	Sharers []string `json:"sharers"`
}
