// Package statefile opens the files git-venom reads and writes outside the
// work tree (its state folder, a harness's transcript) so that no planted
// link, FIFO or device can redirect, block or swallow a read or a write.
package statefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// NotRegularError says a path is not a regular file (or is a link where
// none is followed); nothing was read or written through it.
type NotRegularError struct {
	Path string
	Kind string // "symbolic link", "FIFO", "socket", "device", "directory", ...
	Want string // what should be there: "" for a regular file, or "folder"
}

func (e *NotRegularError) Error() string {
	want := e.Want
	if want == "" {
		want = "regular file"
	}
	return fmt.Sprintf("%s is a %s, not a %s", e.Path, e.Kind, want)
}

// OpenRegular opens path only if it is a regular file. The open carries
// O_NONBLOCK, so a FIFO cannot block it, and O_NOFOLLOW when nofollow is
// set, so a link at the last component is refused; fstat then checks the
// file itself, and O_NONBLOCK is cleared again for ordinary reads.
func OpenRegular(path string, flag int, perm os.FileMode, nofollow bool) (*os.File, error) {
	flag |= syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if nofollow {
		flag |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		if nofollow && isLoop(err) {
			return nil, &NotRegularError{Path: path, Kind: "symbolic link"}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Kind: KindOf(fi.Sys().(*syscall.Stat_t).Mode)}
	}
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func isLoop(err error) bool {
	pe, ok := err.(*fs.PathError)
	return ok && pe.Err == syscall.ELOOP
}

// ReadRegular reads the whole file at path if it is a regular file (see
// OpenRegular). A capture reads files of a work tree that another process
// can shape (a .gitignore, a nested repository's .git file) this way: a
// FIFO or a device swapped in after an lstat must never block or flood it.
func ReadRegular(path string, nofollow bool) ([]byte, error) {
	f, err := OpenRegular(path, os.O_RDONLY, 0, nofollow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
