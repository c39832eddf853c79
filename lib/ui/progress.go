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
	mu     sync.Mutex
	msg    string
	render func(elapsed time.Duration) string
	s      *Streams
	shown  bool
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// redraw is how often a progress line with counts is drawn again, when
// its text changed: often enough that counts move, as git's do.
const redraw = 200 * time.Millisecond

// Progress shows msg on a terminal's stderr, with the seconds elapsed, when
// the work takes longer than about a second, and redraws it each second
// until Stop. It prints nothing when stderr is not a terminal, under
// -q/--quiet or under --json.
func (s *Streams) Progress(msg string) *Progress {
	p := &Progress{msg: msg}
	return s.progress(p, func(elapsed time.Duration) string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Sprintf("%s %.0fs", p.msg, elapsed.Seconds())
	})
}

// ProgressOf is Progress with the line render gives, asked again every
// 200 ms: counts, as git's "Updating files: 45% (22500/50000)".
func (s *Streams) ProgressOf(render func(elapsed time.Duration) string) *Progress {
	return s.progress(&Progress{}, render)
}

func (s *Streams) progress(p *Progress, render func(time.Duration) string) *Progress {
	p.render, p.s, p.done = render, s, make(chan struct{})
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
		last := ""
		for {
			select {
			case <-p.done:
				p.mu.Lock()
				if p.shown {
					fmt.Fprint(s.Err, "\r\033[K")
				}
				p.mu.Unlock()
				return
			case <-timer.C:
				line := render(time.Since(start))
				p.mu.Lock()
				if line != last || !p.shown {
					fmt.Fprintf(s.Err, "\r\033[K%s", line)
					last = line
				}
				p.shown = true
				p.mu.Unlock()
				timer.Reset(redraw)
			}
		}
	}()
	return p
}

// Say prints line on stderr, on a line of its own above the progress line
// when one is shown (which the next redraw brings back); nothing under
// -q/--quiet. It is for what a person must know while the work goes on.
func (p *Progress) Say(line string) {
	if p.s == nil || p.s.settings.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.s.Err, "\r\033[K")
		p.shown = false
	}
	fmt.Fprintln(p.s.Err, line)
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
