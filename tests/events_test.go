package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type event struct {
	Seq    float64        `json:"seq"`
	Ts     string         `json:"ts"`
	Source string         `json:"source"`
	Type   string         `json:"type"`
	Data   map[string]any `json:"data"`
}

// eventLines decodes events --json output, one object a line.
func eventLines(t *testing.T, out string) []event {
	t.Helper()
	evs := []event{}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var e event
		require.NoError(t, json.Unmarshal([]byte(l), &e), l)
		evs = append(evs, e)
	}
	return evs
}

func types(evs []event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// published lists the log's records that are published, by seq.
func publishedSeqs(env *Env) []float64 {
	out := []float64{}
	for _, r := range env.LogRecords() {
		switch r["type"] {
		case "checkpoint.taken", "checkpoint.failed", "rollback.started", "rollback.ended",
			"checkpoint.reused", "checkpoint.pruned", "checkpoint.removed", "turn.started", "turn.ended",
			"agent.archived":
			out = append(out, r["seq"].(float64))
		}
	}
	return out
}

func seqs(evs []event) []float64 {
	out := []float64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func TestEvents_CaptureReuseFailureRollback(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	require.Equal(t, "k1", env.Checkpoint("--agent=a1", "--isolation=worktree"))
	env.Checkpoint("--agent=a1") // reused: published too
	env.VenomIn(env.Dir, []string{"VENOM_TEST_FAIL_AT=capture-scan"}, "checkpoint", "--agent=a1", "--json").
		Fails(t, 1, "failed.checkpoint_git")
	env.Write("a.txt", "two\n")
	require.Equal(t, "k2", env.Checkpoint("--agent=a1", "--label=mine"))
	res := env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files")
	require.Equal(t, "one\n", env.Read("a.txt"))

	evs := eventLines(t, env.Venom("checkpoint", "events", "--json").OK(t).Stdout)
	assert.Equal(t, []string{"agent.checkpoint", "agent.checkpoint_reused", "agent.checkpoint_failed",
		"agent.checkpoint", "agent.checkpoint",
		"agent.rollback_started", "agent.checkpoint", "agent.rollback_ended"}, types(evs))
	assert.Equal(t, publishedSeqs(env), seqs(evs), "an event's seq is its record's")

	common := env.CommonDir()
	id, err := os.ReadFile(filepath.Join(common, "venom", "source"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`),
		strings.TrimSpace(string(id)))
	recs := map[float64]map[string]any{}
	for _, r := range env.LogRecords() {
		recs[r["seq"].(float64)] = r
	}
	for _, e := range evs {
		assert.Equal(t, "venom/"+strings.TrimSpace(string(id)), e.Source)
		assert.Equal(t, recs[e.Seq]["ts"], e.Ts)
	}

	k1 := recs[evs[0].Seq]["repos"].([]any)[0].(map[string]any)["commit"]
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1", "reason": "manual", "through_turn": nil,
		"repos": []any{map[string]any{"repo": ".", "commit": k1}}}, evs[0].Data)
	assert.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a1/1"), k1)
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1", "reason": "manual", "turn": nil,
		"relabeled": false, "label": nil, "previous_label": nil}, evs[1].Data)
	evs = append(evs[:1:1], evs[2:]...) // the docs/json.md#events events
	assert.Equal(t, map[string]any{"agent": "a1", "reason": "manual", "code": "failed.checkpoint_git", "repo": "."},
		evs[1].Data)
	assert.Equal(t, "mine", evs[2].Data["label"])
	assert.Equal(t, "pre_rollback", evs[3].Data["reason"])
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1", "safety": res.Safety, "restore": "files"},
		evs[4].Data)
	assert.Equal(t, "rollback", evs[5].Data["reason"])
	assert.Equal(t, map[string]any{"agent": "a1", "checkpoint": "k1", "safety": res.Safety, "restore": "files",
		"ok": true, "after": res.After}, evs[6].Data)

	// Filters: exact names, prefix.*, resources, since.
	only := eventLines(t, env.Venom("checkpoint", "events", "--json",
		`--types=["agent.rollback_started","agent.rollback_ended"]`).OK(t).Stdout)
	assert.Equal(t, []string{"agent.rollback_started", "agent.rollback_ended"}, types(only))
	all := eventLines(t, env.Venom("checkpoint", "events", "--json", "--types=agent.*", "--resources=agent:a1").OK(t).Stdout)
	assert.Equal(t, evs, append(all[:1:1], all[2:]...))
	assert.Empty(t, eventLines(t, env.Venom("checkpoint", "events", "--json", "--resources=agent:zz").OK(t).Stdout))
	since := eventLines(t, env.Venom("checkpoint", "events", "--json", "--since="+jsonNum(evs[4].Seq)).OK(t).Stdout)
	assert.Equal(t, evs[5:], since)
	env.Venom("checkpoint", "events", "--json", "--types=agent.rollback_*").Fails(t, 2, "invalid_params.filter")
	env.Venom("checkpoint", "events", "--json", "--resources=a1").Fails(t, 2, "invalid_params.filter")

	// Human lines.
	out := env.Venom("checkpoint", "events").OK(t).Stdout
	assert.Contains(t, out, " agent.checkpoint a1/k2 manual \"mine\"\n")
	assert.Contains(t, out, " agent.rollback_ended a1/k1 safety "+res.Safety+" files ok\n")
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

func TestEvents_FollowSeesAnotherProcessAcrossATornTail(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "1\n")
	env.Checkpoint("--agent=a1")

	// The binary itself, not through git: git dies of the SIGINT below
	// as it does for any command, while the follower must end cleanly.
	cmd := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), "events", "--follow", "--json")
	cmd.Dir, cmd.Env = env.Dir, env.Environ()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() event {
		t.Helper()
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the follower ended")
			var e event
			require.NoError(t, json.Unmarshal([]byte(l), &e), l)
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10 s")
		}
		return event{}
	}
	got := []event{next()}
	assert.Equal(t, "k1", got[0].Data["checkpoint"])

	// Another process writes: the follower sees it.
	env.Write("a.txt", "2\n")
	env.Checkpoint("--agent=a1")
	got = append(got, next())
	assert.Equal(t, "k2", got[1].Data["checkpoint"])

	// A crash leaves a torn tail; the next writer cuts it and appends.
	f, err := os.OpenFile(env.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":99,"ts":"2026-11-30T00:00:00.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k9`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	time.Sleep(300 * time.Millisecond) // let the follower see the torn line
	for _, content := range []string{"3\n", "4\n"} {
		env.Write("a.txt", content)
		env.Checkpoint("--agent=a1")
		got = append(got, next())
	}
	assert.Equal(t, "k3", got[2].Data["checkpoint"])
	assert.Equal(t, "k4", got[3].Data["checkpoint"])
	assert.Equal(t, publishedSeqs(env), seqs(got), "an event was missed or repeated")

	// Interrupted, it ends cleanly.
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	for range lines {
		t.Fatal("an extra event after the last record")
	}
	err = cmd.Wait()
	assert.NoError(t, err, "events --follow did not exit 0 on SIGINT")
}

// TestEvents_HelpSaysWhatItPrints: without --json, events prints a short
// line each, not JSON, and its help and man page say so.
func TestEvents_HelpSaysWhatItPrints(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	plain := env.Venom("checkpoint", "events").OK(t).Stdout
	require.NotEmpty(t, plain)
	assert.NotContains(t, plain, "{", "events without --json")
	help := env.Venom("checkpoint", "help").OK(t).Stdout + env.Venom("checkpoint", "-h").Stdout
	seen := 0
	for _, line := range strings.Split(help, "\n") {
		if strings.Contains(line, "event stream") {
			seen++
			assert.Contains(t, line, "--json: JSON lines", line)
		}
	}
	assert.NotZero(t, seen, "the help names the verb:\n%s", help)
	man, err := os.ReadFile(filepath.Join(repoRoot(), "man", "git-venom-checkpoint.1"))
	require.NoError(t, err)
	assert.NotContains(t, string(man), "Prints the log as events, one JSON object a line")
}
