package statefile

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// TempDir is a private folder made by MkdirTemp, held by descriptors (its
// own and its parent's) from the moment it is made: nothing about it is
// resolved by name again, so a link swapped in for the state folder, tmp/
// or the folder itself cannot put another folder in its place.
type TempDir struct {
	dir    *os.File // the folder itself, opened O_DIRECTORY|O_NOFOLLOW
	parent int      // the folder holding it, opened link-free
	name   string   // its name in parent
	path   string   // for messages
}

// MkdirTemp makes a new folder in dir (made link-free if missing, as
// MkdirAll makes it): mkdirat relative to dir's descriptor, mode 0700,
// under a name no other process can guess (pattern as CreateTemp reads
// it), then opened O_DIRECTORY|O_NOFOLLOW and checked to be ours and
// private, so a folder another user put at the name in between is refused.
func MkdirTemp(dir, pattern string) (*TempDir, error) {
	d, err := openDir(absClean(dir), true)
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		name, err := RandomName(pattern)
		if err != nil {
			unix.Close(d)
			return nil, err
		}
		path := absClean(dir) + "/" + name
		err = unix.Mkdirat(d, name, 0o700)
		if err == unix.EEXIST && try < 100 {
			continue
		}
		if err != nil {
			unix.Close(d)
			return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
		}
		fd, err := unix.Openat(d, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			var st unix.Stat_t
			if err = unix.Fstat(fd, &st); err == nil && (int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0) {
				err = unix.EPERM
			}
			if err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			unix.Close(d)
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &TempDir{dir: os.NewFile(uintptr(fd), path), parent: d, name: name, path: path}, nil
	}
}

// File is the folder's descriptor, to resolve names beneath it or to pass
// to a child process (gitcli.Call's ExtraFiles).
func (t *TempDir) File() *os.File { return t.dir }

// Fd is the folder's descriptor number.
func (t *TempDir) Fd() int { return int(t.dir.Fd()) }

// Path is where the folder was made, for messages only.
func (t *TempDir) Path() string { return t.path }

// RemoveAll empties the folder through its descriptor (os.RemoveAll
// beneath /proc/self/fd/<fd>, which never follows a link), removes it from
// its parent's descriptor if the name there is still this folder, and
// closes both descriptors.
func (t *TempDir) RemoveAll() error {
	defer unix.Close(t.parent)
	defer t.dir.Close()
	names, err := t.dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := os.RemoveAll(fmt.Sprintf("/proc/self/fd/%d/%s", t.Fd(), n)); err != nil {
			return err
		}
	}
	var own, at unix.Stat_t
	if err := unix.Fstat(t.Fd(), &own); err != nil {
		return err
	}
	if err := unix.Fstatat(t.parent, t.name, &at, unix.AT_SYMLINK_NOFOLLOW); err != nil || at.Dev != own.Dev || at.Ino != own.Ino {
		// Moved away by another process: what is at the name is not ours.
		return nil
	}
	if err := unix.Unlinkat(t.parent, t.name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "remove", Path: t.path, Err: err}
	}
	return nil
}
