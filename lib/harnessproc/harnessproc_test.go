package harnessproc

import (
	"fmt"
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

// TestHarness_SkipsShellsAndGit: this test binary, run again under sh,
// finds this one as its harness, whatever ran this one (go test, or
// tests/run's shell).
func TestHarness_SkipsShellsAndGit(t *testing.T) {
	if os.Getenv("HARNESSPROC_TEST_CHILD") != "" {
		id := Harness(func(string) string { return "" }, "")
		fmt.Printf("harness %d %d\n", id.PID, id.Start)
		return
	}
	cmd := exec.Command("sh", "-c", `"$0" -test.run='^TestHarness_SkipsShellsAndGit$'; exit $?`, os.Args[0])
	cmd.Env = append(os.Environ(), "HARNESSPROC_TEST_CHILD=1")
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	self := Of(os.Getpid())
	assert.Contains(t, string(out), fmt.Sprintf("harness %d %d\n", self.PID, self.Start))
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
