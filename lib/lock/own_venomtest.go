//go:build venomtest

package lock

import "context"

// Own gives the locks taken under the returned context a set of their
// own, for a command run in a process that outlives it (the tests run
// commands in theirs): ReleaseAll(ctx) then ends only that command's
// locking. end, called when the command has ended as its process would,
// closes the files of the locks it still holds, which drops their flocks
// as the kernel drops a dead process's.
func Own(ctx context.Context) (_ context.Context, end func()) {
	s := &heldSet{locks: map[*Lock]bool{}}
	return context.WithValue(ctx, heldKey{}, s), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ended = true
		for l := range s.locks {
			_ = l.f.Close()
			l.f = nil
			delete(s.locks, l)
		}
	}
}
