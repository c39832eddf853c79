package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Watchman is a private watchman server for tests: its socket, state,
// log and pid files in a folder of its own, never the person's. Bin holds
// a watchman wrapper that names them, so that git's fsmonitor-watchman
// hook, and the server it starts when none runs, use them.
type Watchman struct {
	Dir, Bin, Sock string
}

// watchmanSample is git's hook, as the installed git ships it.
const watchmanSample = "/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample"

// NewWatchman makes a private watchman folder (the server starts on the
// first query); stop it with Stop.
func NewWatchman(dir string) (*Watchman, error) {
	real, err := exec.LookPath("watchman")
	if err != nil {
		return nil, err
	}
	w := &Watchman{Dir: dir, Bin: filepath.Join(dir, "bin"), Sock: filepath.Join(dir, "sock")}
	if err := os.MkdirAll(w.Bin, 0o755); err != nil {
		return nil, err
	}
	script := fmt.Sprintf("#!/bin/sh\nexec %s --sockname=%s --statefile=%s --logfile=%s --pidfile=%s \"$@\"\n",
		real, w.Sock, filepath.Join(dir, "state"), filepath.Join(dir, "log"), filepath.Join(dir, "pid"))
	if err := os.WriteFile(filepath.Join(w.Bin, "watchman"), []byte(script), 0o755); err != nil {
		return nil, err
	}
	return w, nil
}

// Env is what a command needs to reach this watchman.
func (w *Watchman) Env() []string {
	return []string{"PATH=" + w.Bin + ":" + binDir + ":" + gitDir + ":/usr/local/bin:/usr/bin:/bin", "WATCHMAN_SOCK=" + w.Sock}
}

// Pid is the running server's process id, 0 when none.
func (w *Watchman) Pid() int {
	b, err := os.ReadFile(filepath.Join(w.Dir, "pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// Kill ends the server, as a crash would, and waits for it to go.
func (w *Watchman) Kill() {
	pid := w.Pid()
	if pid == 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	_ = os.Remove(w.Sock)
}

// Start starts the server (with the watches its statefile keeps).
func (w *Watchman) Start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(filepath.Join(w.Bin, "watchman"), "watch-list")
	cmd.Env = append(os.Environ(), w.Env()...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotZero(t, w.Pid())
}

// Stop shuts the server down.
func (w *Watchman) Stop() {
	if w.Pid() == 0 {
		return
	}
	cmd := exec.Command(filepath.Join(w.Bin, "watchman"), "--no-spawn", "shutdown-server")
	cmd.Env = append(os.Environ(), w.Env()...)
	_ = cmd.Run()
	for i := 0; i < 100 && w.Pid() != 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	w.Kill()
}

// UseWatchman turns the fsmonitor on in e's repository: git's
// fsmonitor-watchman hook as core.fsmonitor, reaching w.
func (e *Env) UseWatchman(w *Watchman) {
	e.t.Helper()
	hook, err := os.ReadFile(watchmanSample)
	require.NoError(e.t, err)
	gitDir, _, _ := e.gitDirs()
	require.NoError(e.t, os.MkdirAll(filepath.Join(gitDir, "hooks"), 0o755))
	require.NoError(e.t, os.WriteFile(filepath.Join(gitDir, "hooks", "query-watchman"), hook, 0o755))
	e.Git("config", "core.fsmonitor", filepath.Join(gitDir, "hooks", "query-watchman"))
	e.Extra = append(e.Extra, w.Env()...)
}

// The test mode VENOM_TEST_FSMONITOR=1 runs every test with the fsmonitor
// on: each NewBareEnv repository uses git's watchman hook, reaching one
// private watchman for the whole run (stopped when the run ends).
var (
	sharedWatchman     *Watchman
	sharedWatchmanOnce sync.Once
	sharedWatchmanErr  error
)

func fsmonitorMode() bool { return os.Getenv("VENOM_TEST_FSMONITOR") == "1" }

// runWatchman is the run's watchman in the fsmonitor test mode.
func runWatchman(t *testing.T) *Watchman {
	sharedWatchmanOnce.Do(func() {
		dir, err := os.MkdirTemp("", "venom-watchman-")
		if err != nil {
			sharedWatchmanErr = err
			return
		}
		sharedWatchman, sharedWatchmanErr = NewWatchman(dir)
	})
	require.NoError(t, sharedWatchmanErr, "VENOM_TEST_FSMONITOR=1 needs watchman")
	return sharedWatchman
}

// stopRunWatchman ends the run's watchman, if it started.
func stopRunWatchman() {
	if sharedWatchman != nil {
		sharedWatchman.Stop()
		_ = os.RemoveAll(sharedWatchman.Dir)
	}
}

// PrivateWatchman is a watchman of the test's own, stopped when it ends.
func PrivateWatchman(t *testing.T) *Watchman {
	t.Helper()
	if _, err := exec.LookPath("watchman"); err != nil {
		t.Skip("watchman is not installed (tests/run installs it)")
	}
	dir, err := os.MkdirTemp("", "venom-wm-")
	require.NoError(t, err)
	w, err := NewWatchman(dir)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.Stop()
		_ = os.RemoveAll(dir)
	})
	return w
}
