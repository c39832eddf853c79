package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SIGHUP to a hook in the middle of its capture (a harness closing its
// terminal): as SIGTERM, it ends the hook's context, so the hook either
// finishes its step or abandons it whole, exits 0, says so on stderr and
// leaves the lock free, with every checkpoint ref named by its log record.
// Without the signal handled, the hook died of it on the spot: the lock's
// holder record stayed behind, naming a dead process.
func TestSecurity_HookSIGHUPMidCapture(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		point    string
		resume   bool // the pause ends after the signal: the capture goes on with its context ended
		finishes bool // past its ref, a capture records it rather than leave it unlogged
	}{
		{"capture-scan", true, false},
		{"capture-write-tree", true, false},
		{"after-ref", true, true},
		{"capture-scan", false, false}, // it never ends by itself: the backstop abandons it
	} {
		t.Run(tc.point+"/resume="+strconv.FormatBool(tc.resume), func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"})).OK(t)
			env.Write("a.txt", "edited by the agent\n")

			file := filepath.Join(env.Root, "paused")
			extra := []string{"VENOM_TEST_PAUSE_AT=" + tc.point, "VENOM_TEST_PAUSE_FILE=" + file}
			if tc.resume {
				extra = append(extra, "VENOM_TEST_PAUSE_RESUME=1")
			}
			c, out, errb := env.startHook(extra, "claude-code",
				strings.NewReader(env.Payload("claude/hooks/Stop.json", map[string]any{"prompt_id": "p1"})))
			pid := waitPauseFile(t, file, errb.String)
			assert.Contains(t, env.lockHolder(), `"pid":`+strconv.Itoa(pid), "the paused hook holds the lock")

			require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
			if tc.resume {
				time.Sleep(200 * time.Millisecond) // the signal is taken before the capture goes on
				require.NoError(t, os.Remove(file))
			}
			r := env.waitHook(c, out, errb)
			r.OK(t)
			ends := 0
			for _, rec := range env.Records("checkpoint.taken") {
				if rec["reason"] == "turn_end" {
					ends++
				}
			}
			if tc.finishes {
				assert.Equal(t, 1, ends, "the capture past its ref is recorded")
			} else {
				assert.Contains(t, r.Stderr, "hangup")
				assert.Zero(t, ends, "the abandoned capture is not recorded")
			}
			assert.Empty(t, env.lockHolder(), "the holder record is cleared")
			env.assertWholeLog(t)
			env.assertRefsLogged(t)

			// The next command takes the lock at once and captures as usual.
			env.SetGlobal("venom.timeout", "2s")
			res := env.Take(t, "--agent=a2")
			require.NotNil(t, res.Checkpoint)
			env.assertWholeLog(t)
			env.assertRefsLogged(t)
		})
	}
}

// waitPauseFile waits for a paused command's pause file and returns the
// pid written in it.
func waitPauseFile(t *testing.T, file string, stderr func() string) int {
	t.Helper()
	for deadline := time.Now().Add(hookGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			require.NoError(t, err)
			return pid
		}
	}
	t.Fatalf("the command never reached its pause point\nstderr: %s", stderr())
	return 0
}
