package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecurity_HookSessionIDIsNoPath: a hook's default agent beside another
// live session of the same harness is named from the session id's tail
// (docs/harness.md#hook-agents). A session id is the harness's, but it
// comes in a payload: one holding "/" and ".." must not become a path
// under .git/venom (the pending mark is named after the agent before the
// agent is checked) nor an agent id the registry refuses, and the hook
// still ends 0.
func TestSecurity_HookSessionIDIsNoPath(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	live := func() int {
		c := exec.Command("sleep", "600")
		require.NoError(t, c.Start())
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c.Process.Pid
	}
	first, second := live(), live()
	env.Extra = []string{fmt.Sprintf("CLAUDE_PID=%d", first)}
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json",
		map[string]any{"session_id": "11111111-2222-4333-8444-555555555555"}))
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json",
		map[string]any{"session_id": "11111111-2222-4333-8444-555555555555", "prompt_id": "p1"}))

	venom := env.StateDir()
	before := stateFiles(t, venom)
	env.Extra = []string{fmt.Sprintf("CLAUDE_PID=%d", second)}
	for _, id := range []string{"x/../../../../../../../../../../../../evil", "zz/../../q", "a\x00b/../../x"} {
		r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json",
			map[string]any{"session_id": id, "prompt_id": "p-" + id}))
		require.NotContains(t, r.Stderr, "panic:")
	}
	after := stateFiles(t, venom)
	for p := range after {
		if !before[p] && !strings.HasPrefix(p, "pending/") && !strings.HasPrefix(p, "tmp") &&
			!strings.HasPrefix(p, "private") && !strings.HasPrefix(p, "packs/") && !strings.HasPrefix(p, "scan") {
			t.Errorf("the hooks made %s in the state folder", p)
		}
	}
	// Every agent in the log has an id the registry accepts.
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(venom, "log.jsonl"))), "\n") {
		var rec struct {
			Agent string `json:"agent"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec.Agent != "" {
			require.Regexp(t, `^[a-z0-9][a-z0-9_-]{0,63}$`, rec.Agent, "a log record names agent %q", rec.Agent)
		}
	}
}

// stateFiles lists the files under dir, relative to it.
func stateFiles(t *testing.T, dir string) map[string]bool {
	out := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = true
		}
		return nil
	}))
	return out
}

// TestSecurity_HookAgentIsNoPath: the hook's agent from --agent or
// VENOM_AGENT names its pending mark (.git/venom/pending/<agent>.<pid>)
// before the agent is registered; an id with "/" and ".." must be refused
// before it reaches a path: no folder made, no file written or removed
// outside the state folder, and the hook still ends 0.
func TestSecurity_HookAgentIsNoPath(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	outside := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	agent := strings.Repeat("../", 40) + strings.TrimPrefix(filepath.Join(outside, "made", "evil"), "/")
	payload := env.Payload("claude/hooks/UserPromptSubmit.json", nil)
	for _, args := range [][]string{{"--agent=" + agent}, nil} {
		r := env.runInput(env.Dir, []string{"VENOM_AGENT=" + agent}, payload, "git",
			append([]string{"venom-checkpoint", "hook", "claude-code"}, args...)...)
		r.OK(t)
		require.Contains(t, r.Stderr, "invalid_params.agent")
	}
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, ents, "the hook wrote outside the state folder")
	log, _ := os.ReadFile(filepath.Join(env.StateDir(), "log.jsonl"))
	require.NotContains(t, string(log), "evil", "a record names the agent")
}

// TestSecurity_HookIDsBounded: a hook payload's ids (session, prompt,
// turn) are logged with every event of the turn. A payload within the
// 16 MiB cap but with megabyte ids made records of megabytes (8 events
// of 7 MB ids: a 119 MB log, every command 3 s); one with control
// characters logged them. Both are refused as a bad payload, nothing of
// them is logged, and the hook ends 0.
func TestSecurity_HookIDsBounded(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	long := strings.Repeat("f", 1<<20)
	for _, set := range []map[string]any{
		{"session_id": long}, {"prompt_id": long}, {"session_id": "1111\x00../x"}, {"prompt_id": "p\n1"},
	} {
		r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", set))
		require.Contains(t, r.Stderr, "invalid_params.hook")
	}
	log, _ := os.ReadFile(filepath.Join(env.StateDir(), "log.jsonl"))
	require.Less(t, len(log), 8<<10, "the refused payloads' ids were logged")
	require.NotContains(t, string(log), "../x")
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", nil))
	require.Len(t, env.VenomRefs(), 1, "a sound payload after them takes its checkpoint")
}
