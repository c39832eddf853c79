package store

import (
	"os"
	"strconv"

	git "github.com/libgit2/git2go/v34"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/treepath"
)

// beneath opens the folders a capture reads files from beneath the top,
// following no link (treepath.OpenDirBeneath), the last one held as files
// come in path order; each file is opened from it with O_NOFOLLOW. A
// folder swapped for a link between scan and read is not read through:
// the path is gone, as git's has_symlink_leading_path takes it.
type beneath struct {
	top    int
	path   string // the folder held, "" the top
	dir    int    // its descriptor (top for ""), -1: none held
	dirErr error
}

func openBeneath(top string) (*beneath, error) {
	fd, err := unix.Open(top, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: top, Err: err}
	}
	return &beneath{top: fd, dir: -1}, nil
}

// folder returns the descriptor of the folder holding rel and rel's last
// name; the descriptor stays the cache's.
func (b *beneath) folder(rel string) (int, string, error) {
	parent, name := treepath.Parent(rel), rel
	if parent != "" {
		name = rel[len(parent)+1:]
	}
	if parent == "" {
		return b.top, name, nil
	}
	if b.dir < 0 && b.dirErr == nil || b.path != parent {
		b.release()
		b.path = parent
		b.dir, b.dirErr = treepath.OpenDirBeneath(b.top, parent)
		if b.dirErr != nil {
			b.dir = -1
		}
	}
	if b.dirErr != nil {
		return -1, "", &os.PathError{Op: "open", Path: parent, Err: b.dirErr}
	}
	return b.dir, name, nil
}

// openRegular opens the regular file rel of the tree for reading, in its
// folder (folder) with O_NOFOLLOW, and never blocking on a FIFO swapped in
// since the scan saw a regular file (a link's blob is its target's name:
// readlink). It returns the descriptor, the caller's to close, and the
// file's size.
func (b *beneath) openRegular(rel string) (int, int64, error) {
	dir, name, err := b.folder(rel)
	if err != nil {
		return -1, 0, err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, 0, &os.PathError{Op: "fstat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, 0, &statefile.NotRegularError{Path: rel, Kind: "not a regular file"}
	}
	return fd, st.Size, nil
}

// readlink reads the link rel of the tree, whatever its length.
func (b *beneath) readlink(rel string) (string, error) {
	dir, name, err := b.folder(rel)
	if err != nil {
		return "", err
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: rel, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// nestedHead is the commit the HEAD of the nested repository at rel
// names: its folder is opened beneath the top and the repository opened
// through that descriptor (/proc/self/fd/N), so a folder above it swapped
// for a link does not have a repository outside the tree recorded.
func (b *beneath) nestedHead(rel string) (git.Oid, error) {
	dir, name, err := b.folder(rel)
	if err != nil {
		return git.Oid{}, err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return git.Oid{}, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	defer unix.Close(fd)
	return nestedHead("/proc/self/fd/" + strconv.Itoa(fd))
}

func (b *beneath) release() {
	if b.dir >= 0 {
		unix.Close(b.dir)
	}
	b.path, b.dir, b.dirErr = "", -1, nil
}

func (b *beneath) close() {
	b.release()
	unix.Close(b.top)
}
