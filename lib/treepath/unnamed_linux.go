package treepath

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// CreateUnnamed opens, for reading and writing, a new regular file of the folder's file
// system that has no name yet (O_TMPFILE): its mode is perm less the umask
// (or the folder's default ACL), and its group the folder's when the
// folder is setgid, as for a file created in the folder by name. Nothing
// appears in the folder; LinkUnnamed names the file elsewhere. A file
// system or kernel without unnamed files refuses (EOPNOTSUPP, EISDIR or
// EINVAL).
//
// The kernel takes a new file's inode near its folder's: a file made here
// and renamed into the folder later sits where one made in the folder
// itself would.
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
