package store

import (
	"context"
	"errors"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/interrupt"
)

// Failed is the error of a capture's failing step (a git command, or one
// of git-venom's own writes), the same wherever in the capture it failed:
// failed.checkpoint_git, or timeout.checkpoint when the capture ran out of
// time, or failed.interrupted when a signal stopped it.
func Failed(step string, err error) error {
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
