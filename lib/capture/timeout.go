package capture

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/ui"
)

// A capture that runs out of venom.timeout ends timeout.checkpoint. What
// it says must let a person (or a hook's log, or a program reading
// --json, which carries the message and not the hints) act: how much it
// was storing, the venom.exclude setting that leaves the folder behind
// most of it out, and the venom.timeout setting that allows it more
// time; never Go's "context deadline exceeded".

// errSized marks a timeout error that already says what the capture was
// storing (slowError); a deadline still, so that no line prints it.
var errSized = fmt.Errorf("venom.timeout explained: %w", context.DeadlineExceeded)

// slowError is timeout.checkpoint for a capture that ran out of time while
// storing what it found (s).
func slowError(s *sorted, lim Limits) error {
	msg := fmt.Sprintf("the capture of %s in %d new or changed files did not end within venom.timeout (%s)",
		ui.Bytes(s.total), len(s.written), lim.Timeout)
	var fixes []string
	for _, f := range largestFolders(s.written, s.total) {
		fixes = append(fixes, fmt.Sprintf("leave %s (%s) out: %s", quote.C(f.Path), ui.Bytes(f.Bytes), f.Fix))
	}
	fixes = append(fixes, "allow more time: "+TimeoutCommand(lim.Timeout))
	msg += "; " + strings.Join(fixes, "; or ")
	return errcode.Newf(errcode.TimeoutCheckpoint, map[string]string{"repo": "."}, "%s", msg).Wrap(errSized)
}

// timeoutError is timeout.checkpoint for a capture that ran out of time
// before it knew what it would store (git status, the lock) or after.
func timeoutError(lim Limits) error {
	return errcode.Newf(errcode.TimeoutCheckpoint, map[string]string{"repo": "."},
		"the capture did not end within venom.timeout (%s); allow more time: %s", lim.Timeout,
		TimeoutCommand(lim.Timeout)).Wrap(errSized)
}

// explainTimeout turns a capture's running out of time, however its step
// reported it, into slowError's (s known) or timeoutError's; other errors
// pass.
func explainTimeout(err error, s *sorted, lim Limits) error {
	if err == nil || errors.Is(err, errSized) {
		return err
	}
	if !errcode.Is(err, errcode.TimeoutCheckpoint) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if s != nil && lim.Timeout > 0 {
		return slowError(s, lim)
	}
	return timeoutError(lim)
}

// TimeoutCommand is the command that sets venom.timeout to twice d (at
// least a minute), in whole seconds, as git config reads it.
func TimeoutCommand(d time.Duration) string {
	more := max(2*d, time.Minute)
	return quote.Shell([]string{"git", "config", "--global", "venom.timeout", fmt.Sprintf("%ds", int64((more+time.Second-1)/time.Second))})
}
