//go:build !venomtest

package testhook

import (
	"context"
	"time"
)

// Enabled reports whether this build obeys the VENOM_TEST_* variables: a
// release build (install.sh) does not, so no variable can make it fail,
// block or write a profile. tests/run builds with -tags venomtest.
const Enabled = false

// Point never fails outside test builds.
func Point(string) error { return nil }

// With is ctx itself outside test builds: it reads nothing.
func With(ctx context.Context, _ []string) context.Context { return ctx }

// PointIn never fails outside test builds.
func PointIn(context.Context, string) error { return nil }

// Int is always 0 outside test builds: the defaults hold.
func Int(string) int { return 0 }

// IntIn is always 0 outside test builds.
func IntIn([]string, string) int { return 0 }

// Timed records nothing outside test builds.
func Timed(string, time.Time) {}

// Counted records nothing outside test builds.
func Counted(string, int) {}

// Profile starts nothing outside test builds.
func Profile() (stop func()) { return func() {} }
