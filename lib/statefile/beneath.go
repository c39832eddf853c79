package statefile

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// OpenDir is the one way git-venom opens a folder without following a
// link (state folder from "/", tree folders, settings folders): dir, plain
// names joined by "/", beneath the folder open at base, through openat2
// (beneath base, no link resolved) or name by name with O_NOFOLLOW. flag
// is O_PATH or O_RDONLY; "" opens base again; mkdir makes what is missing.
// A link or file on the way is a NotRegularError, its Path beneath base.
func OpenDir(base int, dir string, flag int, mkdir Mkdir) (int, error) {
	if dir == "" || dir == "." {
		return unix.Openat(base, ".", flag|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(base, dir, &unix.OpenHow{
			Flags:   uint64(flag | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == nil {
			return fd, nil
		}
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG) || errors.Is(err, unix.EINVAL) {
			noOpenat2.Store(true) // an old kernel, or a seccomp filter that refuses it
		}
		// Any other failure, or a rename racing the lookup (EAGAIN,
		// EXDEV): the walk decides, makes what is missing, and names
		// the name that failed.
	}
	return WalkDir(base, dir, flag, mkdir)
}

// noOpenat2 is set once openat2 is known to be missing.
var noOpenat2 atomic.Bool

// WalkDir is OpenDir one name at a time, never trying openat2.
func WalkDir(base int, dir string, flag int, mkdir Mkdir) (int, error) {
	flags := flag | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, at := base, ""
	for _, name := range strings.Split(dir, "/") {
		if name == "" {
			continue
		}
		at = path.Join(at, name)
		next, err := unix.Openat(fd, name, flags, 0)
		if err == unix.ENOENT && mkdir != nil {
			next, err = mkdir(fd, name, at)
		}
		if err != nil {
			err = notFolder(fd, name, at, err)
		}
		if fd != base {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	if fd == base {
		return unix.Openat(base, ".", flags, 0) // dir names base itself
	}
	return fd, nil
}

// Mkdir makes the missing folder name in the folder open at dir (at is its
// path beneath OpenDir's base) and opens it for OpenDir; a folder another
// process made meanwhile is opened as it is.
type Mkdir func(dir int, name, at string) (int, error)

// MkdirMode is a Mkdir giving new folders perm, less the umask.
func MkdirMode(perm uint32, flag int) Mkdir {
	return func(dir int, name, _ string) (int, error) {
		if err := unix.Mkdirat(dir, name, perm); err != nil && err != unix.EEXIST {
			return -1, err
		}
		return unix.Openat(dir, name, flag|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
}

// notFolder turns a failed open of a folder into a NotRegularError when
// the name is there but is not a folder (a link, a file, a FIFO).
func notFolder(dir int, name, at string, err error) error {
	if err == unix.ENOTDIR || err == unix.ELOOP {
		var st unix.Stat_t
		if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return &NotRegularError{Path: at, Kind: KindOf(st.Mode), Want: "folder"}
		}
	}
	return &fs.PathError{Op: "open", Path: at, Err: err}
}

// Readlinkat reads the name of the link name in the folder open at dir,
// whatever its length.
func Readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
