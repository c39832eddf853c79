package ui

import (
	"fmt"
	"sync"
	"time"
)

// progressDelay is how long work runs before a person is told it is going
// on: about a second, as git's delayed progress.
const progressDelay = time.Second

// Progress is one line of progress on a terminal's stderr.
type Progress struct {
	mu   sync.Mutex
	msg  string
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// Progress shows msg on a terminal's stderr, with the seconds elapsed, when
// the work takes longer than about a second, and redraws it each second
// until Stop. It prints nothing when stderr is not a terminal, under
// -q/--quiet or under --json.
func (s *Streams) Progress(msg string) *Progress {
	p := &Progress{msg: msg, done: make(chan struct{})}
	if !s.ErrTTY || s.settings.Quiet || s.settings.JSON {
		close(p.done)
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		start := time.Now()
		timer := time.NewTimer(progressDelay)
		defer timer.Stop()
		shown := false
		for {
			select {
			case <-p.done:
				if shown {
					fmt.Fprint(s.Err, "\r\033[K")
				}
				return
			case <-timer.C:
				shown = true
				p.mu.Lock()
				msg := p.msg
				p.mu.Unlock()
				fmt.Fprintf(s.Err, "\r\033[K%s %.0fs", msg, time.Since(start).Seconds())
				timer.Reset(time.Second)
			}
		}
	}()
	return p
}

// Set changes the message from the next redraw on: what the work has found
// so far.
func (p *Progress) Set(msg string) {
	p.mu.Lock()
	p.msg = msg
	p.mu.Unlock()
}

// Stop ends the progress and clears its line; it may be called more than
// once.
func (p *Progress) Stop() {
	p.once.Do(func() {
		select {
		case <-p.done:
		default:
			close(p.done)
		}
		p.wg.Wait()
	})
}

// Bytes is a size as git's progress shows one: bytes, KiB, MiB or GiB.
func Bytes(n int64) string {
	const unit = 1024
	switch {
	case n < unit:
		return fmt.Sprintf("%d bytes", n)
	case n < unit*unit:
		return fmt.Sprintf("%.2f KiB", float64(n)/unit)
	case n < unit*unit*unit:
		return fmt.Sprintf("%.2f MiB", float64(n)/(unit*unit))
	default:
		return fmt.Sprintf("%.2f GiB", float64(n)/(unit*unit*unit))
	}
}
