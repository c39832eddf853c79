package lock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flock locks belong to an open file, so one process holding the lock
// through one Acquire is refused it through another, as another process is.
func TestAcquire_HeldUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	first, err := Acquire(context.Background(), path, Holder{Op: "capture", Agent: "a1"})
	require.NoError(t, err)
	assert.False(t, IsFree(path))

	h, err := ReadHolder(path)
	require.NoError(t, err)
	assert.Equal(t, "capture", h.Op)
	assert.Equal(t, "a1", h.Agent)
	assert.Equal(t, os.Getpid(), h.PID)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var told Holder
	stopped := false
	_, err = AcquireWaiting(ctx, path, Holder{Op: "rollback"}, func(h Holder) func() {
		told = h
		return func() { stopped = true }
	})
	require.Error(t, err)
	assert.True(t, IsHeld(err))
	got, ok := HolderOf(err)
	require.True(t, ok)
	assert.Equal(t, "capture", got.Op, "the error names who holds it")
	assert.Equal(t, "capture", told.Op, "the waiter was told who it waits for")
	assert.True(t, stopped, "and told when the wait ended")
	assert.Contains(t, err.Error(), "capture (pid ")

	first.Release()
	assert.True(t, IsFree(path))
	second, err := Acquire(context.Background(), path, Holder{Op: "rollback"})
	require.NoError(t, err)
	second.Release()
}

// A waiter gets the lock as soon as it is released.
func TestAcquire_WaitsForRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	first, err := Acquire(context.Background(), path, Holder{Op: "a"})
	require.NoError(t, err)
	time.AfterFunc(30*time.Millisecond, first.Release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	second, err := Acquire(ctx, path, Holder{Op: "b"})
	require.NoError(t, err)
	second.Release()
}

// The lock file is never followed through a link (statefile).
func TestAcquire_RefusesALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.WriteFile(target, []byte("precious\n"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "lock")))
	_, err := Acquire(context.Background(), filepath.Join(dir, "lock"), Holder{Op: "x"})
	require.Error(t, err)
	b, _ := os.ReadFile(target)
	assert.Equal(t, "precious\n", string(b))
}

// A mark lives while its holder does; End removes it.
func TestMark(t *testing.T) {
	dir := t.TempDir()
	assert.False(t, Marked(dir, "a1"))
	m, err := Begin(dir, "a1")
	require.NoError(t, err)
	assert.True(t, Marked(dir, "a1"))
	assert.False(t, Marked(dir, "a"), "a mark is for its exact name")
	m.End()
	assert.False(t, Marked(dir, "a1"))
	m.End() // twice is harmless
}
