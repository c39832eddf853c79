// Package interrupt is what a stop signal (Ctrl-C, SIGTERM, SIGHUP) means
// to a command under way: cli.Main ends the command's context on the
// first; a loop that writes checks it often (Check) and stops at its next
// safe point; and a way back, which must not be stopped half-way, runs on
// a context of its own (Detach) while further signals are only noted
// (Shield), as git ignores them in its critical sections.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/errcode"
)

// Signals are the signals that ask a command to stop: Ctrl-C, kill's
// default, and the hangup a closed terminal or a harness ending its
// session sends.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Stopped is the error of a step that stopped because its context ended:
// Why is the signal ("interrupt", "terminated", "hangup") or, for a
// deadline, "venom.timeout".
type Stopped struct {
	Why   string
	cause error
}

func (s *Stopped) Error() string { return "interrupted (" + s.Why + ")" }

// Unwrap lets errors.Is see context.Canceled or DeadlineExceeded.
func (s *Stopped) Unwrap() error { return s.cause }

// Check returns nil while ctx runs, and a *Stopped once it ended: the
// check a write loop makes before each file. It costs a lock and a load.
func Check(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return &Stopped{Why: Why(ctx), cause: ctx.Err()}
}

// Why names what ended ctx: the signal, "venom.timeout" for a deadline,
// "" while it runs.
func Why(ctx context.Context) string {
	if ctx.Err() == nil {
		return ""
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "venom.timeout"
	}
	// signal.NotifyContext's cause reads "interrupt signal received".
	if s, ok := strings.CutSuffix(fmt.Sprint(context.Cause(ctx)), " signal received"); ok {
		return s
	}
	return "cancelled"
}

// Signalled reports whether a stop signal ended ctx.
func Signalled(ctx context.Context) bool {
	w := Why(ctx)
	return w != "" && w != "venom.timeout" && w != "cancelled"
}

// Is reports whether err is a step stopped by its context's end, however
// wrapped (a git command killed, a capture cut short).
func Is(err error) bool {
	var s *Stopped
	return errors.As(err, &s) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// From reports whether err is a step a stop signal ended, and which:
// a *Stopped, a signal.NotifyContext cause anywhere in err's chain (a
// git command killed, gitcli returns it), or a bare context.Canceled
// (a step that read ctx.Err(); only signals cancel a command's context),
// named "a signal" when nothing says which. A deadline is not one.
func From(err error) (why string, ok bool) {
	var s *Stopped
	if errors.As(err, &s) {
		return s.Why, s.Why != "venom.timeout"
	}
	if !errors.Is(err, context.Canceled) {
		return "", false
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if w, ok := strings.CutSuffix(e.Error(), " signal received"); ok && !strings.Contains(w, " ") {
			return w, true
		}
	}
	return "a signal", true
}

// Coded is failed.interrupted: a signal stopped the command at a safe
// point; what says where, and that nothing half-done is recorded.
func Coded(why, what string) *errcode.Error {
	return errcode.Newf(errcode.FailedInterrupted, map[string]string{"signal": why}, "interrupted (%s): %s", why, what)
}

// Detach is a context for a way back: ctx's values, but not its end, and
// a deadline of its own, so a signal that stopped the way forward does
// not stop the way back, and a way back that hangs still ends. A context
// with a deadline also runs each git command in a process group of its
// own (gitcli), out of reach of a second Ctrl-C at the terminal.
func Detach(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// Shield calls told with the name of each stop signal ("interrupt",
// "terminated", "hangup") that arrives until the returned
// func is called: a section that must finish (a way back) tells the person
// it goes on instead of dying. cli.Main's handler already keeps the
// process alive after the first signal; Shield only lets it speak.
func Shield(told func(sig string)) (release func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, Signals...)
	go func() {
		for {
			select {
			case s := <-ch:
				told(s.String())
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
