package packset

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/statefile"
)

// holdNote is the content of the .keep file that keeps a pack git-venom
// wrote until the refs naming its objects are made: git's repack -a -d
// and gc --prune=now leave a kept pack alone, as for fetch's packs. Each
// command relying on the pack holds a shared flock(2) on the file, which
// the kernel drops when it dies; the last holder removes the file, and
// one no process locks is a killed command's (docs/checkpoints.md).
const holdNote = "git-venom: held until the checkpoint naming its objects has its ref\n"

// held maps the .keep files this process holds to their open, locked
// files: one command's packs, released together when it ends (Release).
var held struct {
	sync.Mutex
	files map[string]*os.File
}

// Hold keeps name's pack in packDir before it is installed: it writes the
// .keep file, or joins the hold another live command has on the same
// pack. A .keep of the user's (any other content) is left as it is: it
// keeps the pack too, and is not this process's to remove.
func Hold(packDir, name string) error {
	if !validName(name) {
		return errors.New(name + " is not a pack name")
	}
	p := filepath.Join(packDir, name+".keep")
	held.Lock()
	defer held.Unlock()
	if held.files[p] != nil {
		return nil
	}
	for try := 0; ; try++ {
		f, err := create(p)
		if errors.Is(err, os.ErrExist) {
			// A hold of another command's, or of a killed one: shared
			// while it is the file at p once locked. One let go meanwhile
			// is written anew.
			var again bool
			if f, again, err = join(p); again && try < 20 {
				time.Sleep(time.Millisecond)
				continue
			}
		}
		if err != nil || f == nil {
			return err // nil: the user's .keep keeps the pack
		}
		if held.files == nil {
			held.files = map[string]*os.File{}
		}
		held.files[p] = f
		return nil
	}
}

// create writes a new hold at p, locked shared before its content is
// there (Release and releaseStale remove only a hold holding holdNote).
func create(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o444)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		os.Remove(p)
		return nil, err
	}
	_, err = io.WriteString(f, holdNote)
	if err != nil {
		f.Close()
		os.Remove(p)
		return nil, err
	}
	return f, nil
}

// join takes a shared lock on the hold at p. It returns no file when p
// is not a hold (the user's .keep), and again when the caller should try
// once more: the hold was let go before it was locked (the file is gone
// or replaced: written anew). An empty file is held as found: another
// command's hold before its note (create locks, then writes), which may
// take longer than any wait here; the user's empty .keep stays, as only
// a file holding the note is ever removed.
func join(p string) (f *os.File, again bool, err error) {
	f, err = statefile.OpenRegular(p, os.O_RDONLY, 0, true)
	if errors.Is(err, os.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, nil // a link or a device: not a hold, never followed
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, false, err
	}
	switch {
	case !linked(f, p):
		f.Close()
		return nil, true, nil
	case !noted(f):
		if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
			return f, false, nil
		}
		f.Close()
		return nil, false, nil
	}
	return f, false, nil
}

// Release lets go of this process's holds: a hold no other process holds
// too is removed. A command calls it once the refs naming its packs'
// objects are made (the state transaction's end), or when it makes none.
func Release() {
	held.Lock()
	defer held.Unlock()
	for p, f := range held.files {
		// Alone on it once the lock is exclusive: no other command holds
		// it, and none can join before the file is gone (join checks
		// that the file it locked is still at p).
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && linked(f, p) && noted(f) {
			_ = os.Remove(p)
		}
		f.Close()
	}
	held.files = nil
}

func holding(p string) bool {
	held.Lock()
	defer held.Unlock()
	return held.files[p] != nil
}

// noted says whether the open file f holds exactly holdNote: a hold, not
// the user's .keep.
func noted(f *os.File) bool {
	b := make([]byte, len(holdNote)+1)
	n, _ := f.ReadAt(b, 0)
	return string(b[:n]) == holdNote
}

// linked says whether the open file f is still the file at p.
func linked(f *os.File, p string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(p)
	return err == nil && os.SameFile(fi, now)
}

// releaseStale removes the holds killed commands left: those no live
// process holds a lock on. A live command's hold stays, whether or not
// it holds the repository's lock (a dry run, a diff do not).
func releaseStale(packDir string) {
	keeps, _ := filepath.Glob(filepath.Join(packDir, "pack-*.keep"))
	for _, p := range keeps {
		if !validName(strings.TrimSuffix(filepath.Base(p), ".keep")) || holding(p) {
			continue
		}
		f, err := statefile.OpenRegular(p, os.O_RDONLY, 0, true)
		if err != nil {
			continue
		}
		if noted(f) && syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && linked(f, p) {
			_ = os.Remove(p)
		}
		f.Close()
	}
}
