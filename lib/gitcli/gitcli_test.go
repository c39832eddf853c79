package gitcli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

var ident = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	return dir
}

func runner(dir string, extra ...string) *Runner {
	env := append(append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"), ident...)
	return &Runner{Dir: dir, Env: CleanEnv(append(env, extra...))}
}

// The pins hold whatever the repository's config says: no hook runs (a
// hooksPath of the repository's choosing included), and paths come out
// unquoted.
func TestPins_NoHookAndUnquotedPaths(t *testing.T) {
	dir := newRepo(t)
	hooks := filepath.Join(dir, "hooks")
	require.NoError(t, os.MkdirAll(hooks, 0o755))
	ran := filepath.Join(dir, "hook-ran")
	require.NoError(t, os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\ntouch "+ran+"\n"), 0o755))
	gittest.Run(t, dir, "", nil, "config", "core.hooksPath", hooks)
	gittest.Run(t, dir, "", nil, "config", "core.quotePath", "true")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "é.txt"), []byte("x\n"), 0o644))

	r := runner(dir)
	_, err := r.Run(context.Background(), "add", "é.txt")
	require.NoError(t, err)
	_, err = r.Run(context.Background(), "commit", "-qm", "one")
	require.NoError(t, err)
	assert.NoFileExists(t, ran, "the pre-commit hook ran")
	gittest.Run(t, dir, "", ident, "commit", "-q", "--allow-empty", "-m", "two")
	assert.FileExists(t, ran, "the hook runs for plain git: the test would prove nothing otherwise")

	out, err := r.Run(context.Background(), "ls-files")
	require.NoError(t, err)
	assert.Equal(t, "é.txt\n", string(out))
	assert.Equal(t, `"\303\251.txt"`, gittest.Run(t, dir, "", nil, "ls-files"), "plain git quotes it")
}

// A variable that selects a repository, leaked from the caller, never
// picks another repository than the runner's folder.
func TestCleanEnv_LeakedGitDirIgnored(t *testing.T) {
	mine, other := newRepo(t), newRepo(t)
	env := CleanEnv([]string{"GIT_DIR=" + filepath.Join(other, ".git"), "GIT_WORK_TREE=" + other,
		"GIT_INDEX_FILE=/nowhere", "LC_ALL=fr_FR.UTF-8", "PATH=" + os.Getenv("PATH"), "HOME=/h"})
	assert.Equal(t, []string{"PATH=" + os.Getenv("PATH"), "HOME=/h", "LC_ALL=C", "LANGUAGE=C", "GIT_OPTIONAL_LOCKS=1"}, env)
	out, err := (&Runner{Dir: mine, Env: env}).Run(context.Background(), "rev-parse", "--show-toplevel")
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(mine)
	require.NoError(t, err)
	assert.Equal(t, real, strings.TrimSpace(string(out)))
}

// A failed git is an *Error with its exit code and what git said; Reason
// is the verb and git's message without the argument list.
func TestError_ExitCodeAndReason(t *testing.T) {
	dir := newRepo(t)
	_, err := runner(dir).Run(context.Background(), "rev-parse", "--verify", "--quiet", "nothing^{commit}")
	require.Error(t, err)
	assert.Equal(t, 1, ExitCode(err))
	_, err = runner(dir).Run(context.Background(), "cat-file", "-p", "0000000000000000000000000000000000000001")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 128, e.ExitCode)
	assert.Equal(t, "git cat-file: fatal: Not a valid object name 0000000000000000000000000000000000000001", e.Reason())
	assert.True(t, strings.HasPrefix(e.Error(), "git cat-file -p 0000000000000000000000000000000000000001: exit 128: fatal:"), e.Error())
	assert.NotContains(t, e.Error(), "core.hooksPath", "the pins are not in the message")
	assert.Equal(t, -1, ExitCode(errors.New("not git's")))

	long := &Error{Args: []string{"x"}, ExitCode: 1, Stderr: "1\n2\n3\n4\n5\n6\n"}
	assert.Equal(t, "git x: 1; 2; 3; 4", long.Reason(), "four lines at most")
}

// Stdin, a call's own environment over the runner's, and stdout to a
// writer of the caller's.
func TestRunCall_StdinAndStdout(t *testing.T) {
	dir := newRepo(t)
	r := runner(dir)
	out, err := r.RunInput(context.Background(), []byte("hello\n"), "hash-object", "-w", "--stdin")
	require.NoError(t, err)
	oid := strings.TrimSpace(string(out))
	assert.Equal(t, "hello", gittest.Run(t, dir, "", nil, "cat-file", "-p", oid))
	var b strings.Builder
	out, err = r.RunCall(context.Background(), Call{Stdout: &b, Env: []string{"GIT_AUTHOR_NAME=from the call"}},
		"var", "GIT_AUTHOR_IDENT")
	require.NoError(t, err)
	assert.Empty(t, out, "written to the caller's writer instead")
	assert.True(t, strings.HasPrefix(b.String(), "from the call <t@t> "), b.String())
}

// A call with a time limit that runs out stops what git started as well:
// a clean filter that would sleep for a minute is killed with git.
func TestRunCall_DeadlineStopsTheWholeGroup(t *testing.T) {
	dir := newRepo(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	gittest.Run(t, dir, "", nil, "config", "filter.slow.clean", "echo $$ >"+pidFile+"; exec sleep 60")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.txt filter=slow\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))

	// The time runs out once the filter has started, however slow the
	// machine: a fixed half second could end before git reached it.
	limited, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, expire := context.WithCancelCause(limited)
	defer expire(nil)
	go func() {
		for limited.Err() == nil {
			if b, _ := os.ReadFile(pidFile); strings.HasSuffix(string(b), "\n") {
				expire(context.DeadlineExceeded)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := runner(dir).Run(ctx, "hash-object", "--path=a.txt", "a.txt")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the filter never started")
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	gone := false
	for range 100 { // the orphan is reaped by init in its own time
		if syscall.Kill(pid, 0) != nil {
			gone = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !gone {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	assert.True(t, gone, "the filter's sleep outlived the call")
}

// A stop signal sent to our process group kills git a moment before our
// handler ends the command's context: the call reports the signal (the
// context's cause), not "git: signal: terminated".
func TestRunCall_GitKilledBySignalReportsTheSignal(t *testing.T) {
	dir := newRepo(t)
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	sent := errors.New("terminated signal received")
	// The alias's shell kills git itself ($PPID), as a group signal would;
	// our handler's cancel comes a little later.
	r := runner(dir)
	go func() {
		time.Sleep(100 * time.Millisecond)
		stop(sent)
	}()
	_, err := r.RunCall(ctx, Call{}, "-c", "alias.die=!kill -TERM $PPID", "die")
	require.Error(t, err)
	assert.ErrorIs(t, err, sent, "%v", err)
}
