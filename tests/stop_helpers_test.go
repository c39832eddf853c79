package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stopGroup stops every process of the group pgid with SIGSTOP and
// returns once all their threads are stopped. kill(2) returns as soon as
// the signal is queued: the kernel wakes one thread of each process,
// which then stops the others, and until it runs (a while, on a busy
// machine) the rest of a Go process runs on. A test that goes on at
// once, say by removing a pause file, races the stop.
func stopGroup(t *testing.T, pgid int) {
	t.Helper()
	members := groupMembers(pgid)
	require.NotEmpty(t, members, "no process in group %d", pgid)
	require.NoError(t, syscall.Kill(-pgid, syscall.SIGSTOP))
	deadline := time.Now().Add(time.Minute)
	for {
		running := notStopped(members)
		if len(running) == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "still running a minute after SIGSTOP: %v", running)
		time.Sleep(time.Millisecond)
	}
}

// notStopped lists the threads of the processes that are not stopped,
// as "pid/tid:state" from /proc: T is stopped by a signal, t by a tracer;
// a zombie or a dead thread runs no more either.
func notStopped(pids []int) []string {
	var running []string
	for _, pid := range pids {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		for _, task := range tasks {
			state, _, ok := procStat(task)
			if ok && !strings.Contains("TtZX", state) {
				running = append(running, fmt.Sprintf("%d/%s:%s", pid, filepath.Base(filepath.Dir(task)), state))
			}
		}
	}
	return running
}

// groupMembers lists the processes of the group pgid.
func groupMembers(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, stat := range stats {
		if _, group, ok := procStat(stat); ok && group == pgid {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(stat))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// procStat reads a /proc stat file's state and process group: the
// fields after the command name, which is in parentheses and may hold
// any byte, so they are found after its last ')'.
func procStat(path string) (state string, pgrp int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:]) // state, ppid, pgrp, ...
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}

// TestCrash_StopGroupWaitsForTheStop: kill(2) returns before a busy
// group has stopped; stopGroup returns once every thread has.
func TestCrash_StopGroupWaitsForTheStop(t *testing.T) {
	t.Parallel()
	for try := 0; try < 10; try++ {
		busy := exec.Command("sh", "-c", "for i in 1 2 3 4; do (while :; do :; done) & done; wait")
		busy.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, busy.Start())
		pgid := busy.Process.Pid
		t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL); _ = busy.Wait() })
		var members []int
		for len(members) < 5 {
			time.Sleep(10 * time.Millisecond)
			members = groupMembers(pgid)
		}
		stopGroup(t, pgid)
		require.Empty(t, notStopped(members), "try %d", try)
		require.NoError(t, syscall.Kill(-pgid, syscall.SIGKILL))
		_ = busy.Wait()
	}
}

// TestCrash_StopGroupStopsEveryThreadFirst: once stopGroup returns, no
// thread of the paused command (git and git-venom-checkpoint, each with
// its threads) runs, so removing its pause file cannot let it go on.
// Right after kill(2) some thread of a Go process is still running in
// most tries on a loaded machine.
func TestCrash_StopGroupStopsEveryThreadFirst(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.Write("a.txt", "a1's work\n")
	want := env.RecipeTree()
	p := env.pause("after-ref", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "checkpoint", "--agent=a1", "--json")
	pgid := p.cmd.Process.Pid
	members := groupMembers(pgid)
	require.Len(t, members, 2, "git and git-venom-checkpoint")
	stopGroup(t, pgid)
	require.Empty(t, notStopped(members))
	require.NoError(t, os.Remove(p.file))
	time.Sleep(200 * time.Millisecond)
	require.Empty(t, notStopped(members))
	require.False(t, lockFree(env), "the stopped capture let go of the lock")
	require.NoError(t, syscall.Kill(-pgid, syscall.SIGCONT))
	<-p.done
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	require.Equal(t, want, env.refTree("refs/venom/checkpoints/a1/2"))
}
