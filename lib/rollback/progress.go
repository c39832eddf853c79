package rollback

import (
	"sync/atomic"
)

// Progress is how far a real call is, written by the rollback and read by
// a progress line on another goroutine (rollbackcmd): every member is
// atomic, and a nil *Progress counts nothing.
type Progress struct {
	// Files is set once the files are being written (step 4); Back once
	// the way back runs (docs/rollback.md#failures), with Why what failed
	// or the signal that stopped the way forward.
	Files, Back atomic.Bool
	// Done of Total files, counted in halves: a deletion counts 2, a write
	// 1 when it is staged and 1 when it is placed, so that Done moves
	// while blobs are inflated.
	Done, Total atomic.Int64
	why         atomic.Pointer[string]
	// Again is the signal a person sent during the way back, which does
	// not stop it: "" when none.
	again atomic.Pointer[string]
	// Told is called once for each signal during the way back (from
	// another goroutine): the command says it goes on.
	Told func(sig string)
}

// halves is Done's unit.
const halves = 2

// count starts counting n files.
func (p *Progress) count(n int) {
	if p == nil {
		return
	}
	p.Done.Store(0)
	p.Total.Store(int64(n) * halves)
}

// add counts n units done.
func (p *Progress) add(n int) {
	if p != nil {
		p.Done.Add(int64(n))
	}
}

func (p *Progress) files() {
	if p != nil {
		p.Files.Store(true)
	}
}

func (p *Progress) back(why string) {
	if p == nil {
		return
	}
	p.why.Store(&why)
	p.count(0)
	p.Back.Store(true)
}

func (p *Progress) told(sig string) {
	if p == nil {
		return
	}
	p.again.Store(&sig)
	if p.Told != nil {
		p.Told(sig)
	}
}

// Why is what sent the rollback back: the failure, or "interrupt",
// "terminated", "hangup".
func (p *Progress) Why() string {
	if s := p.why.Load(); s != nil {
		return *s
	}
	return ""
}

// Again is the signal the way back was sent, "" for none.
func (p *Progress) Again() string {
	if s := p.again.Load(); s != nil {
		return *s
	}
	return ""
}

// Counts are Done and Total in files.
func (p *Progress) Counts() (done, total int64) {
	return p.Done.Load() / halves, p.Total.Load() / halves
}
