package tests

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/harness/codex"
)

// refsOf lists an agent's checkpoint refs, with plain git.
func (e *Env) refsOf(agent string) []string {
	out := e.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/"+agent+"/")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// trustProject is the step hook install prints for an untrusted project,
// taken as printed: the project's entry in the user's config.toml.
func (c *realCodex) trustProject(t *testing.T) {
	f, err := os.OpenFile(filepath.Join(c.Home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\n[projects." + strconv.Quote(c.e.Dir) + "]\ntrust_level = \"trusted\"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// doctorCheck returns one doctor check by id.
func (e *Env) doctorCheck(t *testing.T, id string) map[string]any {
	t.Helper()
	var rep struct {
		Checks []map[string]any `json:"checks"`
	}
	e.Venom("checkpoint", "doctor", "--json").JSON(t, &rep)
	for _, c := range rep.Checks {
		if c["id"] == id {
			return c
		}
	}
	t.Fatalf("doctor has no check %s", id)
	return nil
}

// After hook install, codex exec takes turn checkpoints:
// install records Codex's trust in exactly its hooks (Codex computes their
// keys and hashes), says what to do about an untrusted project, and
// doctor reports hooks Codex would skip. Reinstalling with another --agent
// changes the hooks' hash; install trusts the new one.
func TestRealCodex_InstalledHooksRun(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := e.UseRealCodex(t)

	var res struct {
		CodexTrust struct {
			Config         string   `json:"config"`
			Hooks          []string `json:"hooks"`
			Changed        bool     `json:"changed"`
			ProjectTrusted bool     `json:"project_trusted"`
			Step           string   `json:"step"`
		} `json:"codex_trust"`
	}
	e.Venom("checkpoint", "hook", "install", "codex", "--json").OK(t).JSON(t, &res)
	hooksJSON := e.Path(".codex/hooks.json")
	assert.ElementsMatch(t, []string{hooksJSON + ":session_start:0:0", hooksJSON + ":user_prompt_submit:0:0",
		hooksJSON + ":post_tool_use:0:0", hooksJSON + ":stop:0:0"}, res.CodexTrust.Hooks)
	assert.True(t, res.CodexTrust.Changed)
	assert.False(t, res.CodexTrust.ProjectTrusted, "a new project is not trusted; install does not trust it")
	assert.Contains(t, res.CodexTrust.Step, `[projects."`+e.Dir+`"] trust_level = "trusted"`)
	cfg, err := os.ReadFile(filepath.Join(c.Home, "config.toml"))
	require.NoError(t, err)
	assert.NotContains(t, string(cfg), "[projects.", "the project's trust stays the person's decision")
	assert.Equal(t, 4, strings.Count(string(cfg), "trusted_hash"), "%s", cfg)
	check := e.doctorCheck(t, "harness.codex.hooks")
	assert.Equal(t, "warn", check["status"])
	assert.Contains(t, check["fix"], `trust_level = "trusted"`)

	// The step taken, the hooks run: turn_start and turn_end per turn.
	c.trustProject(t)
	assert.Equal(t, "ok", e.doctorCheck(t, "harness.codex.hooks")["status"])
	c.Mock.Turn("made a and b", patchCall(addFile("a.txt", "one\n")), execCall("echo two > b.txt"))
	c.Exec("", "make a and b").OK(t)
	require.Len(t, e.refsOf("codex"), 2, "turn_start and turn_end of the turn")
	assert.Equal(t, "one\n", e.Git("show", "refs/venom/checkpoints/codex/2:a.txt")+"\n")
	assert.Equal(t, "two", e.Git("show", "refs/venom/checkpoints/codex/2:b.txt"))
	assert.NotContains(t, e.Git("ls-tree", "--name-only", "refs/venom/checkpoints/codex/1"), "a.txt")

	// Installing again as is changes nothing.
	e.Venom("checkpoint", "hook", "install", "codex", "--json").OK(t).JSON(t, &res)
	assert.False(t, res.CodexTrust.Changed)
	assert.True(t, res.CodexTrust.ProjectTrusted)

	// Another --agent: new commands, new hashes, trusted again; the hooks
	// still run, for the new agent.
	r := e.Venom("checkpoint", "hook", "install", "codex", "--agent=cx").OK(t)
	assert.Contains(t, r.Stdout, "Recorded Codex's trust in these 4 hooks")
	// Only the hint that .codex/hooks.json is not ignored: no warning.
	assert.Contains(t, r.Stderr, "printf '%s\\n' /.codex/hooks.json >> .git/info/exclude")
	for _, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		assert.True(t, strings.HasPrefix(line, "hint: "), "%q", line)
	}
	c.Mock.Turn("made c", patchCall(addFile("c.txt", "three\n")))
	c.Exec("", "make c").OK(t)
	require.Len(t, e.refsOf("cx"), 2)
	assert.Equal(t, "three", e.Git("show", "refs/venom/checkpoints/cx/2:c.txt"))
	assert.Equal(t, "ok", e.doctorCheck(t, "harness.codex.hooks")["status"])

	// A hook edited by hand is "modified" to Codex, which skips it: doctor
	// says so and names the install that trusts it again.
	data := strings.Replace(e.Read(".codex/hooks.json"), "--agent=cx", "--agent=cy", 1)
	e.Write(".codex/hooks.json", data)
	check = e.doctorCheck(t, "harness.codex.hooks")
	assert.Equal(t, "warn", check["status"])
	assert.Contains(t, check["message"], "is modified")
	assert.Equal(t, "git venom-checkpoint hook install codex --agent=cy", check["fix"])
}

// waitRefs polls for an agent's refs: Codex starts notify without waiting
// for it, so it may finish after codex exec has exited.
func (e *Env) waitRefs(t *testing.T, agent string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		refs := e.refsOf(agent)
		if len(refs) >= n || time.Now().After(deadline) {
			return refs
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Codex reads notify only from the user's config.toml.
// Install refuses to write it anywhere else (the repository's
// .codex/config.toml, where it never ran), and at --scope=user the real
// program runs it after each turn: a turn_end checkpoint.
func TestRealCodex_NotifyAtUserScope(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := e.UseRealCodex(t)
	r := e.Venom("checkpoint", "hook", "install", "codex", "--via=notify").Fails(t, 2, "invalid_params.usage")
	assert.Contains(t, r.Stderr, filepath.Join(c.Home, "config.toml"))
	assert.NoFileExists(t, e.Path(".codex/config.toml"))

	e.Venom("checkpoint", "hook", "install", "codex", "--via=notify", "--scope=user").OK(t)
	cfg, err := os.ReadFile(filepath.Join(c.Home, "config.toml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(cfg), `notify = ["git", "venom-checkpoint", "hook", "codex"]`+"\n"))
	c.Mock.Turn("made a", patchCall(addFile("a.txt", "one\n")))
	c.Exec("", "make a").OK(t)
	refs := e.waitRefs(t, "codex", 1)
	require.Len(t, refs, 1, "notify's turn_end")
	assert.Equal(t, "one", e.Git("show", "refs/venom/checkpoints/codex/1:a.txt"))
	var list struct {
		Checkpoints []struct {
			Reason string `json:"reason"`
		} `json:"checkpoints"`
	}
	e.Venom("checkpoint", "list", "--agent=codex", "--json").OK(t).JSON(t, &list)
	require.Len(t, list.Checkpoints, 1)
	assert.Equal(t, "turn_end", list.Checkpoints[0].Reason)
	var agents struct {
		Agents []map[string]any `json:"agents"`
	}
	e.Venom("checkpoint", "agents", "--json").OK(t).JSON(t, &agents)
	require.Len(t, agents.Agents, 1)
	assert.Equal(t, "codex", agents.Agents[0]["harness"])
}

// installHooks installs git-venom's Codex hooks and takes the step install
// names for a project Codex does not trust yet, so the hooks run.
func (c *realCodex) installHooks(t *testing.T, args ...string) {
	t.Helper()
	c.e.Venom("checkpoint", append([]string{"hook", "install", "codex"}, args...)...).OK(t)
	c.trustProject(t)
}

// A restore=all rollback that must fork a Codex thread
// finds a missing codex program in preflight, dry run included, as
// unsupported.harness_capability with data.fix, before anything is
// written: no safety checkpoint, no record, no file touched.
func TestRealCodex_MissingCodexRefusedInPreflight(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := e.UseRealCodex(t)
	c.installHooks(t)
	c.Mock.Turn("made a", patchCall(addFile("a.txt", "one\n")))
	c.Exec("", "make a").OK(t)
	c.Mock.Turn("made b", patchCall(addFile("b.txt", "two\n")))
	c.Exec("", "make b").OK(t)
	// k1 t1's start, k2 its end (and, reused, t2's start), k3 t2's end.
	require.Len(t, e.refsOf("codex"), 3)

	// PATH without codex (the real binary's folder left out).
	noCodex := []string{"PATH=" + binDir + ":" + gitDir + ":/usr/local/bin:/usr/bin:/bin"}
	dry := e.VenomIn(e.Dir, noCodex, "rollback", "--agent=codex", "--checkpoint=k2", "--dry-run", "--json")
	dry.Fails(t, 10, "unsupported.harness_capability")
	data := dry.Map(t)["error"].(map[string]any)["data"].(map[string]any)
	assert.Equal(t, "--restore=files", data["fix"])
	assert.Equal(t, "codex", data["harness"])

	// The real call, with the plan made where codex was found.
	plan := e.DryRun("--agent=codex", "--checkpoint=k2").Plan
	log := e.LogRecords()
	before := e.Snapshot()
	r := e.VenomIn(e.Dir, noCodex, "rollback", "--agent=codex", "--checkpoint=k2", "--plan="+plan)
	r.Fails(t, 10, "unsupported.harness_capability")
	assert.Contains(t, r.Stderr, "codex is not on PATH")
	assert.Len(t, e.refsOf("codex"), 3, "no safety checkpoint")
	assert.Equal(t, len(log), len(e.LogRecords()), "nothing logged")
	e.AssertUntouched(t, before)

	// Files only needs no codex.
	plan = e.DryRun("--agent=codex", "--checkpoint=k2", "--restore=files").Plan
	e.VenomIn(e.Dir, noCodex, "rollback", "--agent=codex", "--checkpoint=k2", "--restore=files", "--plan="+plan).OK(t)
	assert.NoFileExists(t, e.Path("b.txt"))
}

// A turn whose model call fails ends with no hook at all
// (Codex has no StopFailure). The turn must not block a rollback: codex
// exec has exited, so nothing runs it.
func TestRealCodex_FailedTurnDoesNotBlockRollback(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := e.UseRealCodex(t)
	c.installHooks(t)
	c.Mock.Turn("made a", patchCall(addFile("a.txt", "one\n")))
	c.Exec("", "make a").OK(t)
	// The second turn edits b.txt, then its next model call fails.
	c.Mock.Then(mockReply{Items: []map[string]any{patchCall(addFile("b.txt", "two\n"))}}, mockReply{Fail: 400})
	failed := c.Exec("", "make b")
	require.NotEqual(t, 0, failed.Code, "the turn failed: %v", failed.Events)
	assert.Equal(t, "two\n", e.Read("b.txt"))
	assert.Equal(t, 0, c.Mock.Left())
	assert.Contains(t, e.DryRun("--agent=codex", "--checkpoint=k2").Classes(), "b.txt")
	e.Rollback("--agent=codex", "--checkpoint=k2", "--restore=files")
	assert.NoFileExists(t, e.Path("b.txt"))
	assert.Equal(t, "one\n", e.Read("a.txt"))
}

// Two codex sessions (threads) in one
// worktree at once are two agents. The first keeps the default name; the
// second, started while the first runs, gets codex-<8 of its thread id>.
// Neither ends the other's turn or takes its edits.
func TestRealCodex_TwoSessionsAreTwoAgents(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := e.UseRealCodex(t)
	c.installHooks(t)
	gate := make(chan struct{})
	// Session A's first answer waits at the gate; B runs a whole turn
	// meanwhile; then A goes on.
	c.Mock.Then(mockReply{Gate: gate, Items: []map[string]any{patchCall(addFile("a.txt", "from a\n"))}})
	c.Mock.Turn("made b", patchCall(addFile("b.txt", "from b\n")))
	c.Mock.Then(mockReply{Items: []map[string]any{say("made a")}})
	first := make(chan codexRun, 1)
	go func() { first <- c.Exec("", "make a") }()
	// A's turn is open (its turn_start taken) before B starts.
	require.Len(t, e.waitRefs(t, "codex", 1), 1)
	b := c.Exec("", "make b").OK(t)
	close(gate)
	a := (<-first).OK(t)
	require.NotEqual(t, a.Thread, b.Thread)

	tail := strings.ReplaceAll(b.Thread, "-", "")
	second := "codex-" + tail[len(tail)-8:]
	var agents struct {
		Agents []struct {
			Agent   string `json:"agent"`
			State   string `json:"state"`
			Harness string `json:"harness"`
		} `json:"agents"`
	}
	e.Venom("checkpoint", "agents", "--json").OK(t).JSON(t, &agents)
	require.Len(t, agents.Agents, 2, "%+v", agents.Agents)
	assert.Equal(t, "codex", agents.Agents[0].Agent)
	assert.Equal(t, second, agents.Agents[1].Agent)
	for _, ag := range agents.Agents {
		assert.Equal(t, "settled", ag.State, "each turn ended by its own Stop")
	}
	// Each agent's turn_end holds its own file; A's turn_start is before
	// either, B's is before its own.
	assert.Equal(t, "from a", e.Git("show", "refs/venom/checkpoints/codex/2:a.txt"))
	assert.Equal(t, "from b", e.Git("show", "refs/venom/checkpoints/"+second+"/2:b.txt"))
	assert.NotContains(t, e.Git("ls-tree", "--name-only", "refs/venom/checkpoints/"+second+"/1"), "b.txt")

	// Each turn ended once, by its own session's Stop; each edit is its
	// own session's agent's.
	ended := map[string]int{}
	for _, r := range e.Records("turn.ended") {
		ended[r["agent"].(string)+"/"+r["turn"].(string)]++
	}
	assert.Equal(t, map[string]int{"codex/t1": 1, second + "/t1": 1}, ended)
	assert.Equal(t, map[string][]string{"codex": {"a.txt"}, second: {"b.txt"}}, e.EditsByAgent())

	// Each agent's rollback to before its turn: its own file is its own
	// (class agent); the other session's is another agent's work outside
	// this one's turns, kept (docs/rollback.md#classes, docs/rollback.md#classes), never taken for its
	// own, as for Claude Code (TestRealClaude_TwoSessionsAreTwoAgents).
	classes := func(agent string) map[string]string { return e.PlanClasses(agent, "k1") }
	assert.Equal(t, map[string]string{"a.txt": "agent", "b.txt": "left outside"}, classes("codex"))
	assert.Equal(t, map[string]string{"a.txt": "left outside", "b.txt": "agent"}, classes(second))
}

// A failed turn with the harness still running: in the TUI (here its
// app-server, the same core) a failed model call ends the turn with no
// hook while the process goes on. The rollout records the turn's end
// (task_complete with its error), so a rollback does not answer
// conflict.turn_running for a turn nothing runs.
func TestRealCodex_FailedTurnInALiveHarness(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := e.UseRealCodex(t)
	c.installHooks(t)
	c.Mock.Then(mockReply{Items: []map[string]any{patchCall(addFile("b.txt", "two\n"))}}, mockReply{Fail: 400})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := codex.Start(ctx, c.Bin, e.Dir, e.Environ())
	require.NoError(t, err)
	defer srv.Close()
	require.NoError(t, srv.Initialize(ctx, "0.0.0"))
	var th struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	require.NoError(t, srv.Call(ctx, "thread/start", map[string]any{"cwd": e.Dir}, &th))
	require.NoError(t, srv.Call(ctx, "turn/start", map[string]any{"threadId": th.Thread.ID,
		"input": []any{map[string]any{"type": "text", "text": "make b"}}}, nil))
	// Bounded wait for the turn to fail, as the harness reports it.
	var status string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && status != "failed"; {
		time.Sleep(200 * time.Millisecond)
		var rd struct {
			Thread struct {
				Turns []struct {
					Status string `json:"status"`
				} `json:"turns"`
			} `json:"thread"`
		}
		// Early reads may be answered "list_turns is not supported yet":
		// asked again.
		err := srv.Call(ctx, "thread/read", map[string]any{"threadId": th.Thread.ID, "includeTurns": true}, &rd)
		if n := len(rd.Thread.Turns); err == nil && n > 0 {
			status = rd.Thread.Turns[n-1].Status
		}
	}
	require.Equal(t, "failed", status)
	assert.Equal(t, "two\n", e.Read("b.txt"))
	require.Len(t, e.refsOf("codex"), 1, "the turn's start only: no hook ended it")

	// The harness still runs; the turn does not.
	assert.Contains(t, e.DryRun("--agent=codex", "--checkpoint=k1", "--restore=files").Classes(), "b.txt")
	e.Rollback("--agent=codex", "--checkpoint=k1", "--restore=files")
	assert.NoFileExists(t, e.Path("b.txt"))
	ended := e.Records("turn.ended")
	require.Len(t, ended, 1)
	assert.Equal(t, "t1", ended[0]["turn"])
}
