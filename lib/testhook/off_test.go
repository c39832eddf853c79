//go:build !venomtest

package testhook

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestOff_IgnoresEveryVariable: without the venomtest tag (a release
// build) no VENOM_TEST_* variable changes what the hooks do, in the
// process's environment or a command's.
func TestOff_IgnoresEveryVariable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VENOM_TEST_FAIL_AT", "a")
	t.Setenv("VENOM_TEST_PAUSE_AT", "b")
	t.Setenv("VENOM_TEST_PACK_THRESHOLD", "3")
	t.Setenv("VENOM_TEST_TIMINGS", filepath.Join(dir, "timings"))
	t.Setenv("VENOM_TEST_CPUPROFILE", filepath.Join(dir, "cpu"))
	assert.NoError(t, Point("a"))
	assert.NoError(t, Point("b"))
	ctx := context.WithValue(context.Background(), t, "the test's")
	assert.True(t, With(ctx, []string{"VENOM_TEST_FAIL_AT=a", "VENOM_TEST_PAUSE_AT=b"}) == ctx, "nothing carried")
	assert.NoError(t, PointIn(With(ctx, os.Environ()), "a"), "a command's own environment")
	assert.NoError(t, PointIn(ctx, "b"))
	assert.Zero(t, Int("VENOM_TEST_PACK_THRESHOLD"))
	assert.Zero(t, IntIn(os.Environ(), "VENOM_TEST_PACK_THRESHOLD"), "a command's own environment")
	Timed("x", time.Now())
	Counted("x", 1)
	Profile()()
	_, err := os.Stat(filepath.Join(dir, "timings"))
	assert.True(t, os.IsNotExist(err), "no timings file")
	_, err = os.Stat(filepath.Join(dir, "cpu"))
	assert.True(t, os.IsNotExist(err), "no profile")
}
