// Package runpace paces the Go runtime through a command's long runs: a
// goroutine making a long run of system calls, and the garbage collector
// of a command that holds a large list live.
package runpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"time"
)

// Pacer passes through the scheduler every 2 ms of a long run of system
// calls (one Pacer a goroutine): a goroutine preempted by the runtime's
// monitor instead sets it polling every 20 µs, which cost a rollback's
// 10,000 rmdirs a third of their CPU again.
type Pacer struct{ last time.Time }

// Pace passes through the scheduler when 2 ms have gone by since it last
// did.
func (p *Pacer) Pace() {
	if now := time.Now(); now.Sub(p.last) >= 2*time.Millisecond {
		runtime.Gosched()
		p.last = now
	}
}

// LargeHeap lowers the collector's goal to 1.5x the live heap, from the 5x
// cli.Main sets for short commands, unless GOGC is set. A command holding
// a large list live (a capture of many files, a rollback's plan of many
// paths) would otherwise grow its heap to cli's soft memory limit: most of
// its resident set, and every page of it touched once, which costs system
// time (about 2 ms a MB on the test VM).
func LargeHeap() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}
