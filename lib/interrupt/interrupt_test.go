package interrupt

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A signal's name comes through however the step that noticed wrapped it;
// a deadline is venom.timeout's, never an interrupt.
func TestWhyAndFrom(t *testing.T) {
	assert.Equal(t, "", Why(context.Background()))
	assert.NoError(t, Check(context.Background()))

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("hangup signal received"))
	assert.Equal(t, "hangup", Why(ctx))
	assert.True(t, Signalled(ctx))
	err := Check(ctx)
	why, ok := From(fmt.Errorf("write a.txt: %w", err))
	assert.True(t, ok)
	assert.Equal(t, "hangup", why)

	why, ok = From(fmt.Errorf("git: %w", context.Canceled))
	assert.True(t, ok)
	assert.Equal(t, "a signal", why)

	dl, stop := context.WithTimeout(context.Background(), time.Nanosecond)
	defer stop()
	<-dl.Done()
	assert.Equal(t, "venom.timeout", Why(dl))
	assert.False(t, Signalled(dl))
	_, ok = From(Check(dl))
	assert.False(t, ok, "a deadline is not an interrupt")
	_, ok = From(context.DeadlineExceeded)
	assert.False(t, ok)
}

// The way back's context outlives the signal, and keeps a deadline.
func TestDetach(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	back, stop := Detach(ctx, time.Minute)
	defer stop()
	assert.NoError(t, back.Err())
	_, has := back.Deadline()
	assert.True(t, has)
}

// Shield hears a signal the process would otherwise take, and lets go.
func TestShield(t *testing.T) {
	heard := make(chan string, 1)
	release := Shield(func(sig string) { heard <- sig })
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGHUP))
	select {
	case s := <-heard:
		assert.Equal(t, "hangup", s)
	case <-time.After(5 * time.Second):
		t.Fatal("the signal was not heard")
	}
	release()
}
