package tests

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A hook always finishes (docs/harness.md#hooks). Each test bounds
// the hook with a guard far past any deadline, so that a hook that hangs
// fails the test instead of the suite's timeout.
const hookGuard = 90 * time.Second

// startHook starts `git venom-checkpoint hook harness` with stdin, in a
// process group of its own.
func (e *Env) startHook(extra []string, harness string, stdin io.Reader) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	e.t.Helper()
	c := e.Command(extra, "checkpoint", "hook", harness)
	c.Stdin = stdin
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(e.t, c.Start())
	e.t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
	return c, &out, &errb
}

// waitHook waits for a started hook, failing the test if it outlives the
// guard.
func (e *Env) waitHook(c *exec.Cmd, out, errb *bytes.Buffer) Result {
	e.t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(hookGuard):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		e.t.Fatalf("the hook was still running after %s\nstderr: %s", hookGuard, errb.String())
	}
	return Result{Args: c.Args, Stdout: out.String(), Stderr: errb.String(), Code: c.ProcessState.ExitCode()}
}

// runHook runs a hook to its end.
func (e *Env) runHook(harness, payload string) Result {
	e.t.Helper()
	c, out, errb := e.startHook(nil, harness, strings.NewReader(payload))
	return e.waitHook(c, out, errb)
}

// lockHolder is the lock file's holder record, "" when none is written.
func (e *Env) lockHolder() string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.CommonDir(), "venom", "lock"))
	require.NoError(e.t, err)
	return strings.TrimSpace(string(b))
}

// A transcript_path that is a FIFO nobody writes to: the hook neither opens
// it for good nor waits for the deadline; the turn ends without a
// conversation anchor, a line on stderr says why, and the next command
// runs at once.
func TestSecurity_HookTranscriptIsAFIFO(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	fifo := filepath.Join(env.Root, "transcript.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))

	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
	env.Write("a.txt", "a\n")
	r := env.runHook("claude-code", env.Payload("claude/hooks/Stop.json",
		map[string]any{"prompt_id": "p1", "transcript_path": fifo}))
	r.OK(t)
	assert.Contains(t, r.Stderr, "invalid_params.hook_payload")
	assert.Contains(t, r.Stderr, "FIFO")
	assert.NotContains(t, r.Stderr, "venom.timeout", "the hook waited for its deadline")
	ends := env.Records("turn.ended")
	require.Len(t, ends, 1, "the turn ended all the same")
	assert.Empty(t, ends[0]["harness_end"])
	assert.Equal(t, "a\n", env.Git("show", "refs/venom/checkpoints/claude/2:a.txt")+"\n", "turn_end was captured")

	// Codex reads its rollout's first line for the version: the same FIFO.
	r = env.runHook("codex", env.Payload("codex/hooks/Stop.turn1.json", map[string]any{"transcript_path": fifo}))
	r.OK(t)
	assert.NotContains(t, r.Stderr, "venom.timeout")
	assert.NotEmpty(t, env.Git("for-each-ref", "refs/venom/checkpoints/codex"), "turn_end was captured")

	list := env.Command(nil, "checkpoint", "list", "--agent=claude")
	list.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	list.Stdout, list.Stderr = &out, &errb
	require.NoError(t, list.Start())
	env.waitHook(list, &out, &errb).OK(t)
	assert.Contains(t, out.String(), "turn_end")
	assert.Empty(t, env.lockHolder())
}

// A 1 GB sparse transcript without a newline: the backward reader gives up
// at its line cap, the hook stays small, records the turn without an
// anchor and exits 0.
func TestSecurity_HookHugeTranscriptWithoutNewline(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	huge := filepath.Join(env.Root, "huge.jsonl")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())

	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
	peak := newPeakRSS(t)
	c, out, errb := env.startHook([]string{peak.Env()}, "claude-code", strings.NewReader(env.Payload("claude/hooks/Stop.json",
		map[string]any{"prompt_id": "p1", "transcript_path": huge})))
	r := env.waitHook(c, out, errb)
	r.OK(t)
	// Its own peak (peakRSS): a read of the whole 1 GiB is far over.
	hwm := peak.Bytes()
	assert.Less(t, hwm, int64(128<<20), "the hook grew to %d MiB", hwm>>20)
	assert.Contains(t, r.Stderr, "too large")
	assert.NotContains(t, r.Stderr, "venom.timeout")
	ends := env.Records("turn.ended")
	require.Len(t, ends, 1)
	assert.Empty(t, ends[0]["harness_end"])
	assert.Empty(t, env.Records("checkpoint.failed"))
	assert.Empty(t, env.lockHolder())
}

// startPausedHook starts a UserPromptSubmit hook that stops at fault point
// hook-locked, holding the lock, and returns it with the pid of
// git-venom-checkpoint (git's child).
func (e *Env) startPausedHook(prompt string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, int) {
	e.t.Helper()
	file := filepath.Join(e.Root, "paused-"+prompt)
	c, out, errb := e.startHook([]string{"VENOM_TEST_PAUSE_AT=hook-locked", "VENOM_TEST_PAUSE_FILE=" + file},
		"claude-code", strings.NewReader(e.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": prompt})))
	deadline := time.Now().Add(hookGuard)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			require.NoError(e.t, err)
			return c, out, errb, pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("the hook never reached hook-locked\nstderr: %s", errb.String())
	return nil, nil, nil, 0
}

// SIGTERM to a hook that holds the lock (a harness ending its hook): it
// exits 0, its holder record is cleared, and the next command takes the
// lock at once. SIGINT to the whole group (^C) frees it the same way.
func TestSecurity_HookSIGTERMReleasesTheLock(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	c, out, errb, pid := env.startPausedHook("p1")
	assert.Contains(t, env.lockHolder(), `"pid":`+strconv.Itoa(pid), "the paused hook holds the lock")
	// From here, a command that has to wait for the lock fails fast.
	env.SetGlobal("venom.timeout", "1s")

	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	r := env.waitHook(c, out, errb)
	r.OK(t)
	assert.Contains(t, r.Stderr, "stopped (terminated)")
	assert.Empty(t, env.lockHolder(), "the holder record is cleared")
	res := env.Take(t, "--agent=a2")
	require.Equal(t, "k1", *res.Checkpoint)

	// ^C in a terminal signals git and the hook together; git dies of the
	// signal once the hook has ended, so only the lock tells.
	env.SetGlobal("venom.timeout", "30s")
	c, out, errb, _ = env.startPausedHook("p2")
	env.SetGlobal("venom.timeout", "1s")
	require.NoError(t, syscall.Kill(-c.Process.Pid, syscall.SIGINT))
	r = env.waitHook(c, out, errb)
	assert.Contains(t, r.Stderr, "stopped (interrupt)")
	assert.Empty(t, env.lockHolder())
	env.Write("b.txt", "b\n")
	res = env.Take(t, "--agent=a2")
	require.Equal(t, "k2", *res.Checkpoint)
}

// A hook stuck past venom.timeout while holding the lock ends by itself
// with exit 0, one line on stderr, and the lock free.
func TestSecurity_HookStuckPastTheTimeout(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.timeout", "2s")
	c, out, errb, _ := env.startPausedHook("p1")
	r := env.waitHook(c, out, errb)
	r.OK(t)
	assert.Contains(t, r.Stderr, "git-venom hook: timeout.checkpoint:")
	assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "one line on stderr: %q", r.Stderr)
	assert.Empty(t, env.lockHolder())
	res := env.Take(t, "--agent=a2")
	require.Equal(t, "k1", *res.Checkpoint)
}

// A harness that never closes the hook's stdin: the hook does not wait for
// it past venom.timeout, read before the payload.
func TestSecurity_HookStdinNeverCloses(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.timeout", "2s")
	stdin, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	_, err = w.WriteString(`{"hook_event_name":"Stop",`) // and nothing more, ever
	require.NoError(t, err)
	start := time.Now()
	c, out, errb := env.startHook(nil, "claude-code", stdin)
	require.NoError(t, stdin.Close()) // the child has its own copy
	r := env.waitHook(c, out, errb)
	r.OK(t)
	// Not a timing test: 2 s against the default's 30, which the hook
	// would wait out if it read the payload before venom.timeout.
	assert.Less(t, time.Since(start), 25*time.Second)
	assert.Contains(t, r.Stderr, "git-venom hook: timeout.checkpoint:")
	env.Take(t, "--agent=a1")
}

// SIGTERM to a hook waiting for the lock (another hook holds it): it stops
// waiting at once, exits 0 and says it was stopped, not that venom.timeout
// ran out. The binary is run directly, as a harness may, so that its own
// exit status shows (git dies of the signal it forwards).
func TestSecurity_HookSIGTERMWhileWaitingForTheLock(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	holder, hout, herr, _ := env.startPausedHook("p1")

	c := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), "hook", "claude-code")
	c.Dir, c.Env = env.Dir, env.Environ()
	c.Stdin = strings.NewReader(env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p1"}))
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	require.NoError(t, c.Start())
	t.Cleanup(func() { _ = c.Process.Kill() })
	mark := filepath.Join(env.Dir, ".git", "venom", "pending", "claude."+strconv.Itoa(c.Process.Pid))
	for deadline := time.Now().Add(hookGuard); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the second hook never waited for the lock")
	}

	require.NoError(t, c.Process.Signal(syscall.SIGTERM))
	r := env.waitHook(c, &out, &errb)
	r.OK(t)
	assert.Contains(t, r.Stderr, "git-venom hook: failed.interrupted: stopped by a signal (terminated)")
	assert.NotContains(t, r.Stderr, "within venom.timeout")

	require.NoError(t, syscall.Kill(-holder.Process.Pid, syscall.SIGTERM))
	env.waitHook(holder, hout, herr)
	assert.Empty(t, env.lockHolder())
}

// A harness that has stopped reading the hook's stderr: the note the hook
// writes while it holds the lock (its transcript is a FIFO) fails with
// EPIPE instead of SIGPIPE killing the hook mid-transaction; it records
// the turn, clears the lock's holder and exits 0.
func TestSecurity_HookStderrClosed(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	fifo := filepath.Join(env.Root, "transcript.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))

	r, w, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	c := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), "hook", "claude-code")
	c.Dir, c.Env = env.Dir, env.Environ()
	c.Stdin = strings.NewReader(env.Payload("claude/hooks/Stop.json",
		map[string]any{"prompt_id": "p1", "transcript_path": fifo}))
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, w
	require.NoError(t, c.Start())
	require.NoError(t, w.Close())
	t.Cleanup(func() { _ = c.Process.Kill() })
	res := env.waitHook(c, &out, &bytes.Buffer{})
	require.Equal(t, 0, res.Code, "%s", c.ProcessState)
	assert.Len(t, env.Records("turn.ended"), 1)
	assert.Empty(t, env.lockHolder())
}
