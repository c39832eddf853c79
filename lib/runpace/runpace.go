// Package runpace keeps a goroutine that makes a long run of system calls
// from being preempted by the Go runtime's monitor.
package runpace

import (
	"runtime"
	"time"
)

// Pacer passes through the scheduler every few milliseconds of a long
// run of system calls (one Pacer a goroutine). A goroutine that never
// does is preempted by the runtime's monitor every 10 ms, and each
// preemption sets the monitor polling every 20 µs again: through the
// 10,000 rmdirs of a rollback deleting 300,000 files, each waiting on the
// disk, its wake-ups cost a third as much CPU as the rmdirs themselves
// (perf). A pass through the scheduler wakes a spare thread, so it is
// made only every 2 ms, well within the 10.
type Pacer struct{ last time.Time }

// Pace passes through the scheduler when 2 ms have gone by since it last
// did.
func (p *Pacer) Pace() {
	if now := time.Now(); now.Sub(p.last) >= 2*time.Millisecond {
		runtime.Gosched()
		p.last = now
	}
}
