package cli

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeCode is the exit status of a command whose reader went away: git's,
// which dies of SIGPIPE, as a shell reports it (128+13). A command of ours
// that writes itself to a closed stdout dies of that signal too (Go's
// default for fd 1), so both ways end alike; 0 would tell a pipefail
// script that the whole output was read.
const pipeCode = 128 + int(syscall.SIGPIPE)

// closedPipe reports an error that only says the reader of our stdout is
// gone (`git venom-diff k1 | head -1`): a write failed with EPIPE, or a git
// child writing there died of SIGPIPE. Such an ending is quiet, as git's.
// The stdout check keeps a child that died writing into a pipe of our own
// a failure.
func closedPipe(err error) bool {
	var ee *exec.ExitError
	switch {
	case errors.Is(err, syscall.EPIPE):
	case errors.As(err, &ee):
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
			return false
		}
	default:
		return false
	}
	return stdoutClosed()
}

// stdoutClosed reports whether fd 1 is a pipe or socket with no reader
// left: poll flags it POLLERR (pipe) or POLLHUP (socket) at once.
func stdoutClosed() bool {
	fds := []unix.PollFd{{Fd: int32(os.Stdout.Fd()), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
