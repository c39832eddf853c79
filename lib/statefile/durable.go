package statefile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ReadDirNames lists the names in the state folder at path, reached
// link-free. A missing folder lists nothing.
func ReadDirNames(path string) ([]string, error) {
	fd, err := openDir(absClean(path), false)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer unix.Close(fd)
	// The O_PATH descriptor cannot be read; "." opened through it can.
	rd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(rd), path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// WriteDurable is WriteAtomic for a file that must survive a crash of the
// machine: the new content is fsynced before the rename, and the folder
// after it.
func WriteDurable(path string, data []byte, perm os.FileMode) error {
	return replace(path, writeAll(data), perm, true)
}

// syncFolder fsyncs the folder open (O_PATH) at d.
func syncFolder(d int, path string) error {
	fd, err := unix.Openat(d, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "fsync", Path: path, Err: err}
	}
	return nil
}
