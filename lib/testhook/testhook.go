//go:build venomtest

// Package testhook holds the named fault points that only tests use. It is
// the one file that reads the VENOM_TEST_* variables, whose table is in
// tests/README.md (VENOM_TEST_FAIL_AT makes Point(name) fail,
// VENOM_TEST_PAUSE_AT makes it block), and only in binaries built with
// -tags venomtest; a release build gets off.go, where every hook does
// nothing.
package testhook

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Enabled reports whether this build obeys the VENOM_TEST_* variables.
const Enabled = true

var (
	mu     sync.Mutex
	passes = map[string]int{}
)

// Point is a named place where a test may inject a failure or a pause.
func Point(name string) error {
	return point(name, &mu, passes, os.Getenv)
}

// hooks are the fault points of one command (With): its environment's
// knobs, and how often the command passed each point.
type hooks struct {
	environ []string
	mu      sync.Mutex
	passes  map[string]int
}

type hooksKey struct{}

// With gives ctx the fault points of the command whose environment is
// environ: PointIn under it obeys that command's VENOM_TEST_FAIL_AT and
// VENOM_TEST_PAUSE_AT, else the process's, counting that command's
// passes alone. A test runs commands in its process beside others.
func With(ctx context.Context, environ []string) context.Context {
	if ctx == nil {
		return nil // no command's context: PointIn is Point
	}
	return context.WithValue(ctx, hooksKey{}, &hooks{environ: environ, passes: map[string]int{}})
}

// PointIn is Point for the command of ctx (With); where ctx has none,
// Point.
func PointIn(ctx context.Context, name string) error {
	var h *hooks
	if ctx != nil {
		h, _ = ctx.Value(hooksKey{}).(*hooks)
	}
	if h == nil {
		return Point(name)
	}
	getenv := func(k string) string {
		if v, ok := lookup(h.environ, k); ok {
			return v
		}
		return os.Getenv(k)
	}
	return point(name, &h.mu, h.passes, getenv)
}

// point fails or pauses at name as getenv's VENOM_TEST_FAIL_AT and
// VENOM_TEST_PAUSE_AT say, counting the pass in passes.
func point(name string, mu *sync.Mutex, passes map[string]int, getenv func(string) string) error {
	fail, pause := getenv("VENOM_TEST_FAIL_AT"), getenv("VENOM_TEST_PAUSE_AT")
	n := 0
	if fail != "" || pause != "" {
		mu.Lock()
		passes[name]++
		n = passes[name]
		mu.Unlock()
	}
	if fail != "" {
		for _, f := range strings.Split(fail, ",") {
			point, nth, counted := strings.Cut(f, "#")
			if point != name {
				continue
			}
			if want, err := strconv.Atoi(nth); !counted || (err == nil && want == n) {
				return fmt.Errorf("injected failure at %s", f)
			}
		}
	}
	if pausesAt(pause, name, n) {
		p := getenv("VENOM_TEST_PAUSE_FILE")
		if p != "" {
			_ = os.WriteFile(p, []byte(fmt.Sprint(os.Getpid())), 0o666)
		}
		// Resumable: the test changes the tree meanwhile, then removes the file.
		if p != "" && getenv("VENOM_TEST_PAUSE_RESUME") == "1" {
			for {
				if _, err := os.Lstat(p); os.IsNotExist(err) {
					return nil
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		for {
			time.Sleep(time.Hour)
		}
	}
	return nil
}

// pausesAt reports whether the list of pause points (name or name#n,
// comma-separated) holds the n-th pass of name.
func pausesAt(list, name string, n int) bool {
	for _, p := range strings.Split(list, ",") {
		if point, nth, counted := strings.Cut(p, "#"); point == name && (!counted || nth == strconv.Itoa(n)) {
			return true
		}
	}
	return false
}

// Int is the test knob name (a VENOM_TEST_* variable) as a positive
// integer, or 0 when it is unset or not one.
func Int(name string) int {
	return knob(name, os.Getenv(name))
}

// IntIn is Int read from a command's environment (os.Environ's form):
// the process's for a binary, its own for a command a test runs in its
// process beside others.
func IntIn(environ []string, name string) int {
	v, _ := lookup(environ, name)
	return knob(name, v)
}

// lookup is the last value of name in environ, and whether it is there.
func lookup(environ []string, name string) (v string, ok bool) {
	for _, kv := range environ {
		if k, val, _ := strings.Cut(kv, "="); k == name {
			v, ok = val, true
		}
	}
	return v, ok
}

// knob is the value v of the knob name as Int reads it.
func knob(name, v string) int {
	if !strings.HasPrefix(name, "VENOM_TEST_") {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Timed appends "name seconds" to the file VENOM_TEST_TIMINGS names, when it
// is set: benchmarks read how long a step inside a command took.
func Timed(name string, start time.Time) {
	timing(fmt.Sprintf("%s %.6f\n", name, time.Since(start).Seconds()))
}

// Counted appends "name n" to the same file: tests read how many things a
// step inside a command did (the files a capture's carry stored).
func Counted(name string, n int) {
	timing(fmt.Sprintf("%s %d\n", name, n))
}

func timing(line string) {
	p := os.Getenv("VENOM_TEST_TIMINGS")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	f.Close()
}
