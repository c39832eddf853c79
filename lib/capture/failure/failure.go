// Package failure names what a capture's failing step was, as the error
// registry shapes it: every package of a capture reports a git call or an
// object write that failed through Git, so a failure says the same wherever
// in the capture it happened.
package failure

import (
	"context"
	"errors"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/interrupt"
)

// Git is failed.checkpoint_git for the capture's step (a git command, or
// one of git-venom's own writes), or timeout.checkpoint when the capture
// ran out of time, or failed.interrupted when a signal stopped it.
func Git(step string, err error) error {
	if why, ok := interrupt.From(err); ok {
		return interrupt.Coded(why, "the capture stopped at "+step+"; no checkpoint was made of it")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errcode.Newf(errcode.TimeoutCheckpoint, map[string]string{"repo": "."},
			"the capture passed venom.timeout").Wrap(err)
	}
	return errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: step},
		"the capture failed at %s", step).Wrap(err)
}
