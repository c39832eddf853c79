package harnessproc

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAlive_AProcessThatExitedIsNot(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	id := Of(cmd.Process.Pid)
	require.Equal(t, cmd.Process.Pid, id.PID)
	assert.True(t, id.Alive())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	assert.False(t, id.Alive())
	assert.False(t, ID{}.Alive(), "nothing recorded is not alive")
}

func TestAlive_AReusedPidIsNotTheSameProcess(t *testing.T) {
	id := Of(os.Getpid())
	require.True(t, id.Alive())
	id.Start++
	assert.False(t, id.Alive())
}

func TestHarness_ClaudePID(t *testing.T) {
	self := Of(os.Getpid())
	got := Harness(func(k string) string {
		if k == "CLAUDE_PID" {
			return strconv.Itoa(os.Getpid())
		}
		return ""
	}, "CLAUDE_PID")
	assert.Equal(t, self, got)
}

// An OpenCode started from Claude Code's shell inherits CLAUDE_PID: its
// hooks name OpenCode's process, by OPENCODE_PID, not Claude Code's.
func TestHarness_OnlyTheHarnessOwnVariable(t *testing.T) {
	env := map[string]string{"CLAUDE_PID": strconv.Itoa(os.Getppid()), "OPENCODE_PID": strconv.Itoa(os.Getpid())}
	getenv := func(k string) string { return env[k] }
	assert.Equal(t, Of(os.Getpid()), Harness(getenv, "OPENCODE_PID"))
	assert.Equal(t, Of(os.Getppid()), Harness(getenv, "CLAUDE_PID"))
}

func TestHarness_SkipsShellsAndGit(t *testing.T) {
	// This test binary's parent is go test's: a harness for this purpose.
	got := Harness(func(string) string { return "" }, "")
	assert.Equal(t, Of(os.Getppid()), got)
}

func TestStat_CommandNamesWithParentheses(t *testing.T) {
	dir := t.TempDir()
	procRoot = dir
	t.Cleanup(func() { procRoot = "/proc" })
	require.NoError(t, os.MkdirAll(dir+"/42", 0o755))
	require.NoError(t, os.WriteFile(dir+"/42/stat",
		[]byte("42 (a) b (c)) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1 1 1\n"), 0o644))
	st, ok := stat(42)
	require.True(t, ok)
	assert.Equal(t, "a) b (c)", st.comm)
	assert.Equal(t, 7, st.ppid)
	assert.Equal(t, uint64(98765), st.start)
}
