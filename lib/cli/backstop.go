package cli

import (
	"os"
	"os/signal"
	"time"
)

// Backstop ends the process when its command outlives a deadline or a
// request to stop, for a command that must always end (a hook,
// docs/harness.md#hooks). The command's context ends first (Main cancels
// it on StopSignals; the command gives it the deadline); Grace later, if
// the command still runs (a read no context reaches, a test's pause
// point), Last runs and the process exits with Code. It is the only
// place in lib/ that calls os.Exit: Main returns its code to main.
type Backstop struct {
	Grace time.Duration
	Code  int
	// Last runs just before the exit, told what ended the command:
	// "deadline", or the signal ("terminated", "interrupt", "hangup").
	Last func(cause string)
	// Exit ends the command with Code after Last: os.Exit when nil. A
	// command that shares its process (Env.Exit) sets it, and the backstop
	// then watches the deadline only: the process's signals are not the
	// command's.
	Exit func(code int)

	timer *time.Timer
	sigs  chan os.Signal
	done  chan struct{}
}

// Start arms the backstop: it fires Grace after deadline, or Grace after
// the first of StopSignals, unless Stop comes first.
func (b *Backstop) Start(deadline time.Time) {
	b.timer = time.NewTimer(time.Until(deadline) + b.Grace)
	b.sigs = make(chan os.Signal, 1)
	b.done = make(chan struct{})
	if b.Exit == nil {
		signal.Notify(b.sigs, StopSignals...)
	}
	go b.watch()
}

// Move sets a new deadline, such as the one a config read later gives.
func (b *Backstop) Move(deadline time.Time) {
	b.timer.Reset(time.Until(deadline) + b.Grace)
}

// Stop disarms it: the command is ending by itself.
func (b *Backstop) Stop() {
	signal.Stop(b.sigs)
	b.timer.Stop()
	close(b.done)
}

func (b *Backstop) watch() {
	var cause string
	select {
	case <-b.done:
		return
	case <-b.timer.C:
		cause = "deadline"
	case s := <-b.sigs:
		select {
		case <-b.done:
			return
		case <-time.After(b.Grace):
			cause = s.String()
		}
	}
	b.Last(cause)
	if b.Exit != nil {
		b.Exit(b.Code)
		return
	}
	os.Exit(b.Code)
}
