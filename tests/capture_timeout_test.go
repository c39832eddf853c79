package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapture_TimeoutSaysWhatAndHow: a capture out of venom.timeout while
// storing ends timeout.checkpoint with a message naming its size, the
// venom.exclude and venom.timeout settings that help, in --json and the
// human line, never "context deadline exceeded". A pause point holds the
// capture at its object writes, so no large tree is needed.
func TestCapture_TimeoutSaysWhatAndHow(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.timeout", "5s")
	env.Write("a.txt", "a\n")
	env.Commit("base")
	for i := 0; i < 40; i++ {
		env.Write(fmt.Sprintf("vendor/lib/f%02d.js", i), strings.Repeat("x", 1000)+"\n")
	}
	env.Write("a.txt", "edited\n")

	for _, json_ := range []bool{true, false} {
		args := []string{"--agent=a1"}
		if json_ {
			args = append(args, "--json")
		}
		p := env.pause("capture-object-write", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "checkpoint", args...)
		time.Sleep(5500 * time.Millisecond) // past venom.timeout
		require.NoError(t, os.Remove(p.file))
		select {
		case <-p.done:
		case <-time.After(2 * time.Minute):
			t.Fatal("the capture did not end")
		}
		require.Equal(t, 7, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
		var msg string
		if json_ {
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(p.out.Bytes(), &e), p.out.String())
			require.Equal(t, "timeout.checkpoint", e.Error.Code)
			msg = e.Error.Message
		} else {
			msg = p.errb.String()
			require.Contains(t, msg, "timeout.checkpoint")
		}
		assert.NotContains(t, msg, "context deadline exceeded")
		assert.Contains(t, msg, "41 new or changed files", "its size")
		assert.Contains(t, msg, "venom.timeout (5s)")
		assert.Contains(t, msg, "git config --global --add venom.exclude /vendor/lib/", "the folder behind it, and how to leave it out")
		assert.Contains(t, msg, "git config --global venom.timeout 60s", "how to allow more time")
		require.Empty(t, env.VenomRefs(), "no checkpoint")
	}
	// The settings it names work as printed: excluded, the capture fits.
	env.Git("config", "--global", "--add", "venom.exclude", "/vendor/lib/")
	res := env.Take(t, "--agent=a1")
	require.NotNil(t, res.Checkpoint)
	require.Equal(t, "excluded", res.Skipped[0].Reason)
}
