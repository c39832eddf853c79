package treepath

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// CreateUnnamed opens, read-write, a new regular file with no name yet
// (O_TMPFILE) on the folder's file system, its mode and group as a file
// created in the folder by name would have; LinkUnnamed names it. A file
// system or kernel without them refuses (EOPNOTSUPP, EISDIR or EINVAL).
// The kernel places its inode near the folder's, as for one made there.
func (f *Folder) CreateUnnamed(perm uint32) (int, error) {
	return unix.Openat(f.fd, ".", unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, perm)
}

// LinkUnnamed gives the unnamed file open at fd the name name in the
// folder open at dir, as open(2) shows: through /proc/self/fd, which
// needs no privilege (linkat's AT_EMPTY_PATH does). It fails when /proc
// is missing (ENOENT) or the folder is on another file system (EXDEV).
func LinkUnnamed(fd, dir int, name string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dir, name, unix.AT_SYMLINK_FOLLOW)
}
