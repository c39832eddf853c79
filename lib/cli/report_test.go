package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ui"
)

// The human line of every coded error ends with its cause, as git's
// "fatal:" lines end with the system's reason; JSON keeps the message.
func TestReport_HumanLineEndsWithCause(t *testing.T) {
	streams, out, errOut := ui.Test()
	cause := &fs.PathError{Op: "mkdir", Path: "/r/.git/venom/tmp", Err: errors.New("no space left on device")}
	err := errcode.Newf(errcode.FailedState, nil, "cannot make a temporary folder").Wrap(cause)

	code := Report(&Env{UI: streams}, fmt.Errorf("rollback: %w", err))

	assert.Equal(t, 1, code)
	assert.Empty(t, out.String())
	assert.Equal(t, "error: failed.state: cannot make a temporary folder: mkdir /r/.git/venom/tmp: no space left on device\n", errOut.String())
}

// A message built around its cause does not say it twice.
func TestReport_CauseAlreadyInMessageNotRepeated(t *testing.T) {
	streams, _, errOut := ui.Test()
	cause := errors.New("is a directory")
	err := errcode.Newf(errcode.FailedState, nil, "cannot read log.jsonl: %v", cause).Wrap(cause)

	Report(&Env{UI: streams}, err)

	assert.Equal(t, "error: failed.state: cannot read log.jsonl: is a directory\n", errOut.String())
}

func TestReport_JSONKeepsMessage(t *testing.T) {
	streams, out, errOut := ui.Test()
	err := errcode.Newf(errcode.FailedState, map[string]string{"file": "x"}, "cannot read x").Wrap(errors.New("boom"))

	code := Report(&Env{UI: streams, JSON: true}, err)

	assert.Equal(t, 1, code)
	assert.Empty(t, errOut.String())
	require.JSONEq(t, `{"error":{"code":"failed.state","message":"cannot read x","data":{"file":"x"}}}`, out.String())
}

// A bug path prints its whole chain, one layer a line.
func TestReport_InternalPrintsChain(t *testing.T) {
	streams, _, errOut := ui.Test()
	inner := errors.New("inner")
	Report(&Env{UI: streams}, fmt.Errorf("outer: %w", inner))

	assert.Equal(t, "error: failed.internal: outer: inner\ncaused by: outer: inner\ncaused by: inner\n", errOut.String())
}
