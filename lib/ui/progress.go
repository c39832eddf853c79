package ui

import (
	"fmt"
	"sync"
	"time"
)

// progressDelay is how long work runs before a person is told it is going
// on: about a second, as git's delayed progress.
const progressDelay = time.Second

// Progress shows msg on a terminal's stderr, with the seconds elapsed, when
// the work takes longer than about a second. It prints nothing when stderr
// is not a terminal, under -q/--quiet or under --json. The returned
// function stops it and clears the line.
func (s *Streams) Progress(msg string) func() {
	if !s.ErrTTY || s.settings.Quiet || s.settings.JSON {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		timer := time.NewTimer(progressDelay)
		defer timer.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(s.Err, "\r\033[K")
				}
				return
			case <-timer.C:
				shown = true
				fmt.Fprintf(s.Err, "\r\033[K%s %.0fs", msg, time.Since(start).Seconds())
				timer.Reset(time.Second)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}
