package packset

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// holdNote is the content of the .keep file that keeps a pack git-venom
// wrote until the refs naming its objects are made: git's repack -a -d
// and gc --prune=now leave a kept pack alone, as for fetch's packs. Each
// command relying on the pack holds a shared flock(2) on the file, which
// the kernel drops when it dies; the last holder removes the file, and
// one no process locks is a killed command's (docs/checkpoints.md).
const holdNote = "git-venom: held until the checkpoint naming its objects has its ref\n"

// keepTemp starts the name of a hold's file while its note is written,
// before it is linked to its .keep name: a name no git command makes, so
// releaseStale never takes git's own tmp_ files.
const keepTemp = "tmp_keep_venom_"

// orphanAge is the age past which an empty .keep an older git-venom made
// is its killed command's: it wrote the note microseconds after.
const orphanAge = 10 * time.Minute

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

// create writes a new hold at p: its note is written, under its lock, in
// a temporary file then linked to p (ErrExist: another command's hold or
// the user's .keep is there), so p is never seen without its note, and a
// command killed meanwhile leaves only the temporary file, which
// releaseStale removes.
func create(p string) (*os.File, error) {
	for try := 0; ; try++ {
		f, tmp, err := writeTemp(filepath.Dir(p))
		if err != nil {
			return nil, err
		}
		if err := testhook.Point("pack-hold-written"); err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, err
		}
		err = os.Link(tmp, p)
		if err == nil {
			if err := testhook.Point("pack-hold-linked"); err != nil {
				f.Close() // both names stay, as after a kill: releaseStale's
				return nil, err
			}
			_ = os.Remove(tmp)
			return f, nil
		}
		f.Close()
		_ = os.Remove(tmp)
		switch {
		case errors.Is(err, os.ErrNotExist) && try < 20:
			continue // a sweep took the file before it was locked
		case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EOPNOTSUPP):
			return createInPlace(p) // a file system without hard links
		}
		return nil, err
	}
}

// writeTemp makes a hold's temporary file in dir, locked shared, with
// its note: read-only, as the .keep it becomes.
func writeTemp(dir string) (*os.File, string, error) {
	for {
		tmp := filepath.Join(dir, fmt.Sprintf("%s%016x", keepTemp, rand.Uint64()))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o444)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := lockAndNote(f); err != nil {
			f.Close()
			os.Remove(tmp)
			return nil, "", err
		}
		return f, tmp, nil
	}
}

// createInPlace writes the hold at p itself, where no hard link can be
// made: locked, then its note, so that a kill between the two leaves an
// empty .keep (an orphan, which releaseStale removes).
func createInPlace(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o444)
	if err != nil {
		return nil, err
	}
	if err := lockAndNote(f); err != nil {
		f.Close()
		os.Remove(p)
		return nil, err
	}
	return f, nil
}

func lockAndNote(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		return err
	}
	_, err := io.WriteString(f, holdNote)
	return err
}

// join takes a shared lock on the hold at p. It returns no file when p
// is not a hold (the user's .keep), and again when the caller should try
// once more: the hold was let go before it was locked (the file is gone
// or replaced: written anew). An empty file is held as found: the user's
// (never removed), or an older git-venom's hold before its note (it wrote
// the note in the .keep itself), removed when it holds the note by the
// time this command lets go.
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

// releaseStale removes what killed commands left in packDir: the holds
// no live process holds a lock on, the temporary files of holds being
// written, and the empty .keep files an older git-venom left (orphan).
// A live command's hold stays, whether or not it holds the repository's
// lock (a dry run, a diff do not). recorded is git-venom's packs.
func releaseStale(packDir string, recorded []string) {
	ents, err := os.ReadDir(packDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		p := filepath.Join(packDir, n)
		if strings.HasPrefix(n, keepTemp) {
			removeUnlocked(p, func(*os.File) bool { return true })
			continue
		}
		name, ok := strings.CutSuffix(n, ".keep")
		if !ok || !validName(name) || holding(p) {
			continue
		}
		removeUnlocked(p, func(f *os.File) bool {
			return noted(f) || orphan(f, packDir, name, recorded)
		})
	}
}

// removeUnlocked removes the file at p when stale says it may go and no
// process holds a lock on it: once the lock is exclusive, none can join
// before the file is gone (join checks that the file it locked is still
// at p).
func removeUnlocked(p string, stale func(*os.File) bool) {
	f, err := statefile.OpenRegular(p, os.O_RDONLY, 0, true)
	if err != nil {
		return
	}
	defer f.Close()
	if stale(f) && syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil && linked(f, p) {
		_ = os.Remove(p)
	}
}

// orphan says whether f, the .keep of pack name, is one an older git-venom
// left empty: killed between making its hold read-only and writing its
// note in it, so its pack was kept for ever. Only an empty read-only .keep
// older than orphanAge, on a pack that is git-venom's or absent: git's
// own (index-pack --keep) is 0600 and a touch's writable, so they stay.
func orphan(f *os.File, packDir, name string, recorded []string) bool {
	fi, err := f.Stat()
	if err != nil || fi.Size() != 0 || fi.Mode().Perm()&0o222 != 0 || time.Since(fi.ModTime()) < orphanAge {
		return false
	}
	return contains(recorded, name) || !exists(filepath.Join(packDir, name+".pack"))
}
