package events

import (
	"context"
	"time"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/journal"
)

// Stream reads a journal's events from a seq on, and can follow it.
type Stream struct {
	Log    string // log.jsonl
	Dir    string // the state directory, watched for changes
	Source string
	Filter *Filter
	tail   journal.Tail
}

// NewStream starts after seq since.
func NewStream(log, dir, source string, f *Filter, since int64) *Stream {
	s := &Stream{Log: log, Dir: dir, Source: source, Filter: f}
	s.tail = journal.Tail{Path: log, Want: Published}
	s.tail.SkipThrough(since)
	return s
}

// Next returns the events appended since the previous call.
func (s *Stream) Next() ([]Event, error) {
	var out []Event
	err := s.tail.Each(func(e *journal.Entry) {
		ev, ok := FromRecord(e, s.Source)
		if ok && s.Filter.Match(&ev) {
			out = append(out, ev)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Follow calls emit for every event from now on, until ctx ends or emit
// fails. It sleeps in inotify on the state folder and also looks every
// second (inotify can be missing or overflow), reading whole lines from
// where it stopped (journal.Tail): no record missed or repeated.
func (s *Stream) Follow(ctx context.Context, emit func(Event) error) error {
	w := newWatcher(s.Dir)
	defer w.close()
	for {
		evs, err := s.Next()
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := emit(ev); err != nil {
				return err
			}
		}
		if err := w.wait(ctx, time.Second); err != nil {
			return nil // interrupted: the stream ends cleanly
		}
	}
}

// watcher waits for a change in a directory.
type watcher struct{ fd int }

func newWatcher(dir string) *watcher {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return &watcher{fd: -1}
	}
	mask := uint32(unix.IN_MODIFY | unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE)
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return &watcher{fd: -1}
	}
	return &watcher{fd: fd}
}

func (w *watcher) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
	}
}

// wait returns when the directory changed, when max passed, or with
// ctx's error when ctx ended. It wakes every 200 ms to look at ctx: a
// signal cancels ctx without touching the fd.
func (w *watcher) wait(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		step := 200 * time.Millisecond
		if left < step {
			step = left
		}
		if w.fd < 0 {
			time.Sleep(step)
			continue
		}
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(step/time.Millisecond))
		if err != nil && err != unix.EINTR {
			time.Sleep(step)
			continue
		}
		if n > 0 {
			w.drain()
			return nil
		}
	}
}

func (w *watcher) drain() {
	buf := make([]byte, 64*1024)
	for {
		n, err := unix.Read(w.fd, buf)
		if n <= 0 || err != nil {
			return
		}
	}
}
