//go:build venomtest

package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/lock"
)

// TestTxn_EndAfterItsLockWentTouchesNothing: a command whose locks were
// let go (ReleaseAll, or the tests' in-process backstop) and whose work
// then ended removed the temporary folder that the next holder of the
// lock was using (git update-index: "Unable to create .../tmp/...lock").
// Its End now waits for the process's end and removes nothing.
func TestTxn_EndAfterItsLockWentTouchesNothing(t *testing.T) {
	s := newStore(t)
	ctx, end := lock.Own(context.Background())
	tx, err := s.Begin(ctx, lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err)
	end()
	next, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err, "the lock is free once the first command's set ended")
	require.NoError(t, os.MkdirAll(s.TmpDir(), 0o755))
	mine := filepath.Join(s.TmpDir(), "capture-next.index")
	require.NoError(t, os.WriteFile(mine, nil, 0o644))
	ended := make(chan struct{})
	go func() {
		tx.End()
		close(ended)
	}()
	select {
	case <-ended:
		t.Fatal("End returned after its lock went")
	case <-time.After(200 * time.Millisecond):
	}
	assert.FileExists(t, mine, "the next holder's file")
	next.End()
	assert.NoDirExists(t, s.TmpDir(), "the holder's own End clears it")
}
