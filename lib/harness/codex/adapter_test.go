package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
)

// double is tests/codexdouble, built once into a folder of its own as "codex".
var double string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codexdouble-")
	if err != nil {
		panic(err)
	}
	double = filepath.Join(dir, "codex")
	build := exec.Command("go", "build", "-o", double, "./tests/codexdouble")
	build.Dir = filepath.Join("..", "..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the codex double failed:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	thread = "01a22c93-1777-7b03-81d2-cc9f451e14c8"
	turn1  = "01a22c93-1812-7df0-9ee4-f5a15fed6464"
	turn2  = "01a22c93-4615-7e41-bfc6-61fc84931e71"
)

func home(t *testing.T) (string, []string) {
	h := t.TempDir()
	state := map[string]any{"threads": map[string][]string{thread: {turn1, turn2}}}
	b, _ := json.Marshal(state)
	require.NoError(t, os.WriteFile(filepath.Join(h, "double.json"), b, 0o644))
	return h, append(os.Environ(), "CODEX_HOME="+h)
}

func TestFork_AgainstTheDouble(t *testing.T) {
	old := Binary
	Binary = double
	defer func() { Binary = old }()
	h, env := home(t)
	id, err := forkThread(context.Background(), t.TempDir(), env, thread, turn1)
	require.NoError(t, err)
	assert.NotEqual(t, thread, id)

	// What went over the wire, in order.
	log, err := os.ReadFile(filepath.Join(h, "double.log"))
	require.NoError(t, err)
	var methods []string
	var fork map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		methods = append(methods, m.Method)
		if m.Method == "thread/fork" {
			fork = m.Params
		}
	}
	assert.Equal(t, []string{"initialize", "initialized", "thread/fork", "", "thread/unsubscribe"}, methods,
		"the double's own request is answered (method \"\" is our error reply)")
	assert.Equal(t, map[string]any{"threadId": thread, "lastTurnId": turn1, "excludeTurns": true}, fork)

	var st struct {
		Threads map[string][]string `json:"threads"`
	}
	b, _ := os.ReadFile(filepath.Join(h, "double.json"))
	require.NoError(t, json.Unmarshal(b, &st))
	assert.Equal(t, []string{turn1}, st.Threads[id], "the fork holds turn 1 under its own id")
	assert.Equal(t, []string{turn1, turn2}, st.Threads[thread], "the source is unchanged")
}

func TestFork_Errors(t *testing.T) {
	saved := Binary
	Binary = double
	defer func() { Binary = saved }()
	_, env := home(t)
	ctx := context.Background()
	code := func(env []string, thread, turn string) errcode.Code {
		_, err := forkThread(ctx, t.TempDir(), env, thread, turn)
		require.Error(t, err)
		e, ok := errcode.As(mapErr(ctx, "a", thread, turn, err))
		require.True(t, ok)
		return e.Code
	}
	assert.Equal(t, errcode.NotFoundHarnessSession, code(env, "01a22c93-0000-7000-8000-000000000000", turn1))
	assert.Equal(t, errcode.NotFoundHarnessSession, code(env, "not-a-uuid", turn1))
	assert.Equal(t, errcode.ConflictHarnessForkRefused, code(env, thread, "01a22c93-0000-7000-8000-00000000dead"))
	assert.Equal(t, errcode.ConflictHarnessForkRefused, code(append(env, "CODEX_DOUBLE_REFUSE=ephemeral threads do not support this"), thread, turn1))

	// A server that never answers: timeout.harness_request, within the bound.
	tctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := forkThread(tctx, t.TempDir(), append(env, "CODEX_DOUBLE_HANG=1"), thread, turn1)
	e, _ := errcode.As(mapErr(tctx, "a", thread, turn1, err))
	require.NotNil(t, e)
	assert.Equal(t, errcode.TimeoutHarnessRequest, e.Code)
	assert.Less(t, time.Since(start), 5*time.Second)

	// No codex at all.
	old := Binary
	Binary = filepath.Join(t.TempDir(), "no-codex")
	defer func() { Binary = old }()
	assert.Equal(t, errcode.ConflictHarnessForkRefused, code(env, thread, turn1))
}

func TestMain_DoubleBinary(t *testing.T) {
	// The adapter finds codex on PATH by default.
	assert.Equal(t, "codex", filepath.Base(double))
	old := Binary
	Binary = double
	defer func() { Binary = old }()
	_, env := home(t)
	id, err := forkThread(context.Background(), t.TempDir(), env, thread, turn2)
	require.NoError(t, err)
	assert.Len(t, id, 36)
}

// realCodex is the npm package's binary (@openai/codex@0.171.0-linux-x64):
// VENOM_TEST_REAL_CODEX names it (tests/run sets it). Under CI its absence
// fails the test.
func TestFork_AgainstTheRealCodex(t *testing.T) {
	bin := os.Getenv("VENOM_TEST_REAL_CODEX")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("VENOM_TEST_REAL_CODEX is not set: tests/run sets it to the codex tests/harnesses/install installs")
		}
		t.Skip("VENOM_TEST_REAL_CODEX is not set")
	}
	h := filepath.Join(t.TempDir(), "codexhome") // not directly under TMPDIR's top, which codex warns about
	sessions := filepath.Join(h, "sessions", "2026", "11", "30")
	require.NoError(t, os.MkdirAll(sessions, 0o755))
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "tests", "testdata", "hooks", "codex",
		"runnable-rollout-0.171.0-"+thread+".jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(sessions, "rollout-2026-11-30T13-09-27-"+thread+".jsonl"), src, 0o644))
	env := append(os.Environ(), "CODEX_HOME="+h)
	old := Binary
	Binary = bin
	defer func() { Binary = old }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id, err := forkThread(ctx, t.TempDir(), env, thread, turn1)
	require.NoError(t, err)
	assert.NotEqual(t, thread, id)
	after, _ := os.ReadFile(filepath.Join(sessions, "rollout-2026-11-30T13-09-27-"+thread+".jsonl"))
	assert.Equal(t, src, after, "the source rollout is unchanged")

	_, err = forkThread(ctx, t.TempDir(), env, "01a22c93-0000-7000-8000-000000000000", turn1)
	e, _ := errcode.As(mapErr(ctx, "a", "x", turn1, err))
	require.NotNil(t, e)
	assert.Equal(t, errcode.NotFoundHarnessSession, e.Code, "%v", err)
}
