package statefile

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CreateTemp creates a new file in the folder dir (made link-free if
// missing), exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) and under a name no
// other process can guess: pattern with its last "*" replaced by random
// characters (or them appended), as os.CreateTemp names it. A link or a
// file planted in advance can therefore never be the file written.
func CreateTemp(dir, pattern string) (*os.File, error) {
	d, err := openDir(absClean(dir), true)
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	f, _, err := createIn(d, dir, pattern, 0o666)
	return f, err
}

// createIn is CreateTemp in the open folder d (whose path is dir); it
// returns the file and its name in d.
func createIn(d int, dir, pattern string, perm os.FileMode) (*os.File, string, error) {
	for try := 0; ; try++ {
		name, err := RandomName(pattern)
		if err != nil {
			return nil, "", err
		}
		f, err := openIn(d, name, dir+"/"+name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, name, nil
		}
		if pe, ok := err.(*fs.PathError); ok && pe.Err == unix.EEXIST && try < 100 {
			continue
		}
		return nil, "", err
	}
}

// WriteAtomic replaces the state file at path with data: written to a new
// temporary file beside it (CreateTemp's exclusive, unpredictable name),
// then renamed over path, so a reader sees the old content or the new, and
// a link at path is replaced, never written through. It does not fsync:
// the files written so are caches that a crash may lose.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	return replace(path, writeAll(data), perm, false)
}

// WriteAtomicFrom is WriteAtomic of what write writes: a large state file
// made as it is written, never held whole.
func WriteAtomicFrom(path string, perm os.FileMode, write func(io.Writer) error) error {
	return replace(path, write, perm, false)
}

func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// replace writes to a new temporary file beside path and renames it
// over path; durable fsyncs the file before the rename and the folder
// after it (WriteDurable).
func replace(path string, write func(io.Writer) error, perm os.FileMode, durable bool) error {
	d, name, err := openParent(path, true)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	f, tmp, err := createIn(d, dirOf(path), "."+name+".tmp-*", perm)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = unix.Renameat(d, tmp, d, name); err != nil {
			err = &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
		}
	}
	if err != nil {
		_ = unix.Unlinkat(d, tmp, 0)
		return err
	}
	if durable {
		return syncFolder(d, dirOf(path))
	}
	return nil
}

// SetModTime sets the access and modification times of the open file f
// to t, to the nanosecond (a copied index keeps its mtime), through the
// descriptor: no path is resolved again.
func SetModTime(f *os.File, t time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(t.UnixNano()), unix.NsecToTimespec(t.UnixNano())}
	// utimensat(fd, NULL, ...) is futimens: the times of fd itself.
	_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, f.Fd(), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	if errno != 0 {
		return &fs.PathError{Op: "futimens", Path: f.Name(), Err: errno}
	}
	return nil
}

// TempName is a fresh, unpredictable name in the folder dir (made
// link-free if missing) that no file has, for a tool that creates the file
// itself (git or libgit2 writing an index, which they do by lock file and
// rename, never through what is at the name): the file is created as
// CreateTemp creates it, to know the name was free, then removed.
func TempName(dir, pattern string) (string, error) {
	f, err := CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	f.Close()
	return f.Name(), Remove(f.Name())
}

// RandomName is pattern with its last "*" replaced by 16 hex digits of
// randomness (appended when there is none): a name no other process can
// guess, as CreateTemp's, for a file created exclusively elsewhere.
func RandomName(pattern string) (string, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndex(pattern, "*"); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(r[:]) + suffix, nil
}
