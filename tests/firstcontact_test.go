package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// First contact: what a person new to git-venom
// meets before they know its words.

// TestAgents_InferredFromWorktree: with agents in two worktrees, a command
// run in a worktree that holds exactly one agent means that agent, for
// every verb that names one; where several remain, the error names them.
func TestAgents_InferredFromWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	wt := filepath.Join(env.Root, "wt")
	env.Git("worktree", "add", "-q", "-b", "feature", wt)
	env.Take(t, "--agent=a1")
	env.Write("a.txt", "1\n")
	env.Take(t, "--agent=b1")
	env.VenomIn(wt, nil, "checkpoint", "--agent=w1", "--isolation=worktree", "--json").OK(t)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "w.txt"), []byte("w\n"), 0o644))

	// In the linked worktree, w1 is the only agent: every verb finds it.
	var take TakeResult
	env.VenomIn(wt, nil, "checkpoint", "--json").OK(t).JSON(t, &take)
	assert.Equal(t, "w1", take.Agent)
	var list ListResult
	env.VenomIn(wt, nil, "checkpoint", "list", "--json").OK(t).JSON(t, &list)
	assert.Equal(t, "w1", list.Agent)
	assert.Len(t, list.Checkpoints, 2)
	env.VenomIn(wt, nil, "diff", "k1", "--json").OK(t)
	dry := env.VenomIn(wt, nil, "rollback", "k1", "--dry-run", "--json").OK(t).Map(t)
	assert.Equal(t, "w1", dry["agent"])

	// In the main worktree two agents remain: each verb names them (prune
	// without --agent prunes every agent, and clean, which deletes, must be
	// told the agent, so neither has candidates to name).
	for _, args := range [][]string{
		{"checkpoint"}, {"checkpoint", "list"},
		{"diff", "k1"}, {"rollback", "k1", "--dry-run"},
	} {
		r := env.Venom(args[0], append(args[1:], "--json")...)
		r.Fails(t, 2, "invalid_params.agent")
		e := ErrorOf(t, r)
		assert.JSONEq(t, `{"agents":["a1","b1"]}`, string(e.Error.Data), "%v", args)
		assert.Contains(t, e.Error.Message, "a1, b1", "%v", args)
		human := env.Venom(args[0], args[1:]...)
		assert.Equal(t, 2, human.Code)
		// 80 columns: the names on a hint line of their own.
		assert.Contains(t, human.Stderr, "this worktree has 2 agents: name one with --agent\nhint: they are a1, b1\n", "%v", args)
		assert.Contains(t, human.Stderr, "--agent=a1", "%v", args)
	}

	// In a worktree of no agent, none is a candidate: each works in
	// another worktree, which the hints name.
	other := filepath.Join(env.Root, "other")
	env.Git("worktree", "add", "-q", "--detach", other)
	r := env.VenomIn(other, nil, "checkpoint", "list", "--json")
	r.Fails(t, 2, "invalid_params.agent")
	assert.JSONEq(t, `{"agents":[],"elsewhere":["a1","b1","w1"]}`, string(ErrorOf(t, r).Error.Data))
	assert.Contains(t, env.VenomIn(other, nil, "checkpoint", "list").Stderr,
		"no agent works in this worktree: name one with --agent\nhint: agent a1 works in another worktree:\nhint:   "+env.Dir+"\n")
}

// TestFirstCheckpoint_SaysWhatToType: with no agent yet, a bare
// git venom-checkpoint registers nothing and says the exact command.
func TestFirstCheckpoint_SaysWhatToType(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	r := env.Venom("checkpoint")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "invalid_params.agent: no agent registered yet: name one with --agent")
	assert.Contains(t, r.Stderr, "hint: git venom-checkpoint --agent=a1 ")
	assert.Contains(t, r.Stderr, "hook install claude-code")
	assert.Empty(t, env.LogRecords())
	assert.Empty(t, strings.TrimSpace(env.Git("for-each-ref", "refs/venom")))
	j := env.Venom("checkpoint", "--json")
	j.Fails(t, 2, "invalid_params.agent")
	assert.JSONEq(t, `{"agents":[]}`, string(ErrorOf(t, j).Error.Data))
	// Typed as the hint says, it works.
	env.Venom("checkpoint", "--agent=a1").OK(t)
}

// TestList_NoAgentIsEmpty: list in a repository where no agent was
// ever registered lists nothing and succeeds, as git stash list with no
// stash: text prints nothing on stdout and one note on stderr, --json the
// listing's shape with no agent, -q not even the note. Naming an agent
// that does not exist is still not_found.agent.
func TestList_NoAgentIsEmpty(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	snap := env.Snapshot()
	r := env.Venom("checkpoint", "list").OK(t)
	assert.Empty(t, r.Stdout)
	assert.Equal(t, "No checkpoints: no agent is registered in this repository yet.\n", r.Stderr)
	j := env.Venom("checkpoint", "list", "--json").OK(t)
	assert.JSONEq(t, `{"agent":null,"pending":false,"checkpoints":[],"more_count":0}`, j.Stdout)
	assert.Empty(t, j.Stderr)
	q := env.Venom("checkpoint", "list", "-q").OK(t)
	assert.Empty(t, q.Stdout+q.Stderr)
	env.Venom("checkpoint", "list", "--agent=a1", "--json").Fails(t, 3, "not_found.agent")
	assert.Empty(t, env.LogRecords())
	assert.Empty(t, strings.TrimSpace(env.Git("for-each-ref", "refs/venom")))
	env.AssertUntouched(t, snap)
}

// TestHelp_Verb: help [<verb>...] is <verb> -h in all three commands, and
// -h alone shows the default verb take and its flags.
func TestHelp_Verb(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	root := env.Venom("checkpoint", "-h").OK(t).Stdout
	assert.Equal(t, root, env.Venom("checkpoint", "help").OK(t).Stdout)
	assert.Regexp(t, `(?m)^  take\s+Take a checkpoint \(the default verb`, root)
	assert.Regexp(t, `(?m)^  help\s`, root)
	_, takePart, ok := strings.Cut(root, "With no verb, git venom-checkpoint runs take:")
	require.True(t, ok, "-h does not show the default verb:\n%s", root)
	for _, f := range []string{"--agent", "--reason", "--turn", "--label", "--isolation", "--parent"} {
		assert.Contains(t, takePart, f, "-h shows take's %s", f)
	}
	for verb, flag := range map[string]string{"list": "--before", "take": "--reason", "events": "--follow"} {
		r := env.Venom("checkpoint", "help", verb).OK(t)
		assert.Equal(t, env.Venom("checkpoint", verb, "-h").OK(t).Stdout, r.Stdout, "help %s", verb)
		assert.Contains(t, r.Stdout, flag, "help %s", verb)
	}
	assert.Contains(t, env.Venom("checkpoint", "help", "hook", "install").OK(t).Stdout, "--scope")
	for cmd, flag := range map[string]string{"rollback": "--dry-run", "diff": "--from"} {
		r := env.Venom(cmd, "help").OK(t)
		assert.Equal(t, env.Venom(cmd, "-h").OK(t).Stdout, r.Stdout, "%s help", cmd)
		assert.Contains(t, r.Stdout, flag)
	}
	// No help text sends the reader to documents that do not ship.
	for _, args := range [][]string{
		{"checkpoint", "-h"}, {"checkpoint", "help", "list"}, {"checkpoint", "help", "events"},
		{"checkpoint", "help", "hook", "install"}, {"rollback", "-h"}, {"diff", "-h"},
	} {
		out := env.Venom(args[0], args[1:]...).OK(t).Stdout
		assert.NotRegexp(t, `RFC|CONTRACT`, out, "%v", args)
	}
}

// TestHelp_DidYouMean: a mistyped verb or flag is refused (exit 2, nothing
// run) with the words it is likely a typo of.
func TestHelp_DidYouMean(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"checkpoint", "lsit"}, "hint: did you mean git venom-checkpoint list?"},
		{[]string{"checkpoint", "agnets"}, "hint: did you mean git venom-checkpoint agents?"},
		{[]string{"checkpoint", "help", "lsit"}, "hint: did you mean git venom-checkpoint list?"},
		{[]string{"checkpoint", "help", "hook", "instal"}, "hint: did you mean git venom-checkpoint hook install?"},
		{[]string{"checkpoint", "xyzzy"}, "hint: the verbs are take, list,"},
		{[]string{"checkpoint", "--agent=a1", "lsit"}, "did you mean git venom-checkpoint list?"},
		{[]string{"checkpoint", "list", "--limt=3"}, `did you mean "--limit"?`},
		{[]string{"checkpoint", "--lable=x"}, `did you mean "--label"?`},
		{[]string{"rollback", "k1", "--dryrun"}, `did you mean "--dry-run"?`},
		{[]string{"diff", "--frm=k1"}, `did you mean "--from"?`},
	} {
		r := env.Venom(c.args[0], c.args[1:]...)
		assert.Equal(t, 2, r.Code, "%v", c.args)
		assert.Contains(t, r.Stderr, "error: invalid_params.usage: ", "%v", c.args)
		assert.Contains(t, r.Stderr, c.want, "%v", c.args)
	}
	r := env.Venom("checkpoint", "lsit", "--json")
	r.Fails(t, 2, "invalid_params.usage")
	var data struct {
		Verb  string   `json:"verb"`
		Verbs []string `json:"verbs"`
	}
	require.NoError(t, json.Unmarshal(ErrorOf(t, r).Error.Data, &data))
	assert.Equal(t, "lsit", data.Verb)
	assert.Contains(t, data.Verbs, "list")
	require.Len(t, env.List(t).Checkpoints, 1, "a mistyped verb takes no checkpoint")
}
