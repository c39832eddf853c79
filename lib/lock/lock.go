// Package lock serialises every command that writes a repository's venom
// state, across processes and linked worktrees. It is an flock(2) on
// $COMMON/venom/lock, so the kernel drops it when its holder dies; the file
// also names its holder, for messages and doctor, never for correctness.
package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/statefile"
)

// Holder says who holds the lock.
type Holder struct {
	Op       string `json:"op"`
	Agent    string `json:"agent,omitempty"`
	PID      int    `json:"pid"`
	Hostname string `json:"hostname"`
	Time     string `json:"time"`
}

func (h Holder) String() string {
	s := fmt.Sprintf("%s (pid %d", h.Op, h.PID)
	if h.Agent != "" {
		s += ", agent " + h.Agent
	}
	return s + ", since " + h.Time + ")"
}

// Lock is a held lock.
type Lock struct {
	f   *os.File
	set *heldSet
}

// heldSet is the locks a process holds, for ReleaseAll; a context may
// carry a set of its own (heldKey), for a command that shares its process.
type heldSet struct {
	mu    sync.Mutex
	locks map[*Lock]bool
	// ended: ReleaseAll ran, and the command is about to end; from then on
	// nothing is taken or released.
	ended bool
}

// processHeld is the set of a command that has the process to itself.
var processHeld = &heldSet{locks: map[*Lock]bool{}}

type heldKey struct{}

func heldIn(ctx context.Context) *heldSet {
	if s, ok := ctx.Value(heldKey{}).(*heldSet); ok {
		return s
	}
	return processHeld
}

// pollInterval is how often a waiting process retries; flock has no timeout.
var pollInterval = 10 * time.Millisecond

type heldError struct {
	holder Holder
	err    error
}

func (e *heldError) Error() string {
	return "the repository's venom lock is held by " + e.holder.String()
}

func (e *heldError) Unwrap() error { return e.err }

// IsHeld reports whether err says the lock was held by another process until
// the context ended.
func IsHeld(err error) bool {
	var h *heldError
	return errors.As(err, &h)
}

// HolderOf returns the holder named by a lock error.
func HolderOf(err error) (Holder, bool) {
	var h *heldError
	if errors.As(err, &h) {
		return h.holder, true
	}
	return Holder{}, false
}

// Acquire takes the lock at path, waiting until ctx ends. The file, and
// the folders to it, are opened without following links (statefile): a
// link, FIFO or device there is refused, and nothing is written through it.
func Acquire(ctx context.Context, path string, who Holder) (*Lock, error) {
	return AcquireWaiting(ctx, path, who, nil)
}

// AcquireWaiting is Acquire that calls waiting, once, with the holder when
// the lock is not free at the first try, so that a person can be told who
// they wait for; the function it returns is called when the wait ends,
// either way.
func AcquireWaiting(ctx context.Context, path string, who Holder, waiting func(Holder) (stop func())) (*Lock, error) {
	f, err := statefile.Open(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	stop := func() {}
	defer func() { stop() }()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		if waiting != nil {
			h, _ := ReadHolder(path)
			stop = waiting(h)
			waiting = nil
		}
		select {
		case <-ctx.Done():
			h, _ := ReadHolder(path)
			f.Close()
			return nil, &heldError{holder: h, err: context.Cause(ctx)}
		case <-time.After(pollInterval):
		}
	}
	who.PID = os.Getpid()
	who.Hostname, _ = os.Hostname()
	who.Time = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	b, _ := json.Marshal(who)
	l := &Lock{f: f, set: heldIn(ctx)}
	l.set.mu.Lock()
	defer l.set.mu.Unlock()
	if l.set.ended {
		// Nobody else here holds it: drop it, and wait for the end.
		f.Close()
		l.set.mu.Unlock()
		select {}
	}
	l.set.locks[l] = true
	// The holder record is advisory: a failure to write it changes nothing.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	return l, nil
}

// Release clears the holder record and drops the lock.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	l.set.mu.Lock()
	defer l.set.mu.Unlock()
	if l.set.ended {
		// The lock goes with the command, not before (ReleaseAll).
		l.set.mu.Unlock()
		select {}
	}
	if l.f == nil {
		return
	}
	delete(l.set.locks, l)
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// Guard returns while l's command still holds it and blocks for ever
// once ReleaseAll let it go: the command is about to exit, and what it
// does next must not touch what another holder may already be using.
func (l *Lock) Guard() {
	if l == nil {
		return
	}
	l.set.mu.Lock()
	ended := l.set.ended
	l.set.mu.Unlock()
	if ended {
		select {}
	}
}

// ReleaseAll is for a command about to exit before its work is done (a
// hook past its deadline, or told to stop): it clears the holder record of
// every lock taken under ctx and makes other goroutines that take or
// release one wait for the end. The flocks go with the process, when the
// kernel closes its files, so nothing it still writes lands after another
// process took the lock. The caller must exit next.
func ReleaseAll(ctx context.Context) {
	s := heldIn(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for l := range s.locks {
		_ = l.f.Truncate(0)
	}
}

// ReadHolder reads the holder record; it is empty when nobody holds the lock
// or the holder died before clearing it.
func ReadHolder(path string) (Holder, error) {
	var h Holder
	b, err := statefile.ReadFile(path)
	if err != nil {
		return h, err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return h, nil
	}
	err = json.Unmarshal(b, &h)
	return h, err
}

// IsFree reports whether nobody holds the lock at path right now.
func IsFree(path string) bool {
	f, err := statefile.Open(path, os.O_RDWR, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// Mark is a kernel-released marker that a process is doing something for an
// agent, such as waiting to capture (docs/checkpoints.md#agents-turns-and-states). Others see it with
// Marked until the process ends it or dies.
type Mark struct {
	f    *os.File
	path string
}

// Begin sets a mark in dir for name.
func Begin(dir, name string) (*Mark, error) {
	path := filepath.Join(dir, fmt.Sprintf("%s.%d", name, os.Getpid()))
	f, err := statefile.Open(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return &Mark{f: f, path: path}, nil
}

// End removes the mark.
func (m *Mark) End() {
	if m == nil || m.f == nil {
		return
	}
	_ = statefile.Remove(m.path)
	_ = m.f.Close()
	m.f = nil
}

// Marked reports whether a live process holds a mark for name in dir, and
// removes the marks that dead processes left.
func Marked(dir, name string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	live := false
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), name+".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := statefile.Open(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			live = true
		} else {
			_ = statefile.Remove(path)
		}
		f.Close()
	}
	return live
}
