// Package gitcli is the one way git-venom runs git(1). Every call carries the
// docs/checkpoints.md#how-a-capture-runs pins, so no hook and no fsmonitor ever runs (docs/checkpoints.md#how-a-capture-runs).
package gitcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/interrupt"
)

// Pins are prepended to every git command (docs/checkpoints.md#how-a-capture-runs).
var Pins = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false",
	"-c", "core.quotePath=false",
	"-c", "status.showUntrackedFiles=normal",
	"-c", "core.splitIndex=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "advice.detachedHead=false",
	"-c", "submodule.recurse=false",
}

// strippedVars select a repository, a tree or an index. Runners set them
// explicitly, so a leaked value never picks another repository.
var strippedVars = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES",
	"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_QUARANTINE_PATH",
	"GIT_REFLOG_ACTION", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"GIT_PAGER", "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT",
	"GIT_TRACE2_PERF", "GIT_FLUSH", "GIT_OPTIONAL_LOCKS", "LC_ALL", "LANGUAGE",
}

// waitDelay bounds the wait for git's output after its context ended.
const waitDelay = time.Second

// Runner runs git for one repository.
type Runner struct {
	Dir string   // working directory of every call
	Env []string // environment of every call
}

// CleanEnv returns the process environment without the variables that select
// a repository, so a Runner can set them for the repository it means.
func CleanEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+4)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if contains(strippedVars, name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "LANGUAGE=C", "GIT_OPTIONAL_LOCKS=1")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Error is a failed git command.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: exit %d: %s", strings.Join(e.Args, " "), e.ExitCode, firstLines(msg, 4))
}

func (e *Error) Unwrap() error { return e.Err }

// Reason is the failure as a person reads it at the end of an error line:
// the git verb and what git said, without the whole argument list.
func (e *Error) Reason() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	verb := "git"
	if len(e.Args) > 0 {
		verb = "git " + e.Args[0]
	}
	return verb + ": " + firstLines(msg, 4)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "; ")
}

// Call describes one git command beyond its arguments.
type Call struct {
	Env    []string  // added to the runner's environment
	Stdin  io.Reader // nil for none
	Stdout io.Writer // nil: captured and returned
	Pins   []string  // replaces the default extra pins, appended after Pins
	// ExtraFiles are open in git as descriptors 3, 4, ... (exec.Cmd's
	// ExtraFiles): a folder passed so is reached as /proc/self/fd/3, by
	// descriptor, never again by name.
	ExtraFiles []*os.File
	// Stderr, when set, also receives what git printed on its standard
	// error, whether it failed or not: the warnings of a call that
	// succeeded (git status's folders it could not open).
	Stderr io.Writer
}

// Run runs git with args and returns its standard output.
func (r *Runner) Run(ctx context.Context, args ...string) ([]byte, error) {
	return r.RunCall(ctx, Call{}, args...)
}

// RunInput runs git with args and stdin.
func (r *Runner) RunInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return r.RunCall(ctx, Call{Stdin: bytes.NewReader(stdin)}, args...)
}

// RunCall runs git as c describes.
func (r *Runner) RunCall(ctx context.Context, c Call, args ...string) ([]byte, error) {
	full := append(append(append([]string{}, Pins...), c.Pins...), args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = r.Dir
	if _, ok := ctx.Deadline(); ok {
		// A call with a time limit (a capture) runs in its own process
		// group, so that running out of time stops what git started too,
		// such as a clean filter, and not git alone.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	// A child that outlives git and holds its output open must not hold
	// the call past its context.
	cmd.WaitDelay = waitDelay
	cmd.Env = append(append([]string{}, r.Env...), c.Env...)
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin
	}
	cmd.ExtraFiles = c.ExtraFiles
	var out, stderr bytes.Buffer
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	} else {
		cmd.Stdout = &out
	}
	cmd.Stderr = &stderr
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, c.Stderr)
	}
	err := cmd.Run()
	if err != nil {
		if stoppedBySignal(err) {
			awaitSignalled(ctx)
		}
		if ctx.Err() != nil {
			// The cause: a signal's name, which a report needs, or the
			// deadline (errors.Is still finds context.Canceled).
			return out.Bytes(), context.Cause(ctx)
		}
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return out.Bytes(), &Error{Args: args, ExitCode: code, Stderr: stderr.String(), Err: err}
	}
	return out.Bytes(), nil
}

// stoppedBySignal reports whether git died of one of interrupt.Signals,
// as it does when one is sent to our process group.
func stoppedBySignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	return slices.Contains(interrupt.Signals, os.Signal(ws.Signal()))
}

// awaitSignalled gives our own signal handler a moment to end ctx: the
// same signal that killed git reaches us too, but Go delivers it a little
// later, and the report must name the signal, not git's death by it.
func awaitSignalled(ctx context.Context) {
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// signalGrace bounds that wait when someone else killed git.
const signalGrace = 500 * time.Millisecond

// ExitCode returns the exit code of a failed git command, or -1.
func ExitCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.ExitCode
	}
	return -1
}

// Environ is os.Environ, a seam for tests.
var Environ = os.Environ

// NulList is list as a -z --stdin command reads it: each path ended by NUL.
func NulList(list []string) []byte {
	var b bytes.Buffer
	for _, p := range list {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}
