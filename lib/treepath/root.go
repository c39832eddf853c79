package treepath

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNotDir says a folder on the way to a path is not a folder of the
// tree: a file, or a link (never followed). The path is then not there, as
// far as the tree is concerned; errors.Is(err, ErrNotDir) finds it.
var ErrNotDir = errors.New("a parent is not a folder of the tree (a file or a link)")

// Root is a work tree's top, opened once: every operation resolves its
// path beneath it, folder by folder, and never follows a link, so a folder
// swapped for a link while a rollback runs cannot lead it outside the tree.
type Root struct {
	fd  int
	top string
}

// Open opens the tree's top.
func Open(top string) (*Root, error) {
	fd, err := unix.Open(top, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: top, Err: err}
	}
	return &Root{fd: fd, top: top}, nil
}

// Close releases the top's descriptor.
func (r *Root) Close() error { return unix.Close(r.fd) }

// Lstat describes the entry at p itself, a link included.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	var st unix.Stat_t
	err := r.at("lstat", p, func(dir int, name string) error {
		return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	})
	if err != nil {
		return nil, err
	}
	return &fileInfo{name: path.Base(p), st: st}, nil
}

// Remove unlinks the file or link at p; a folder is refused (EISDIR).
func (r *Root) Remove(p string) error {
	return r.at("remove", p, func(dir int, name string) error { return unix.Unlinkat(dir, name, 0) })
}

// RemoveEmptyDir removes the folder at p if it is empty; a link there is
// refused (ENOTDIR), never followed.
func (r *Root) RemoveEmptyDir(p string) error {
	return r.at("rmdir", p, func(dir int, name string) error { return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR) })
}

// Rename moves the file or link at from (an absolute path outside the
// tree, on the same file system or not) to p, making p's missing folders
// beneath the top. A file or link at p is replaced, never written
// through; a folder at p is refused (EISDIR, ENOTEMPTY or EEXIST).
func (r *Root) Rename(from, p string) error {
	return r.in("rename", p, true, func(dir int, name string) error {
		err := unix.Renameat(unix.AT_FDCWD, from, dir, name)
		if errors.Is(err, unix.EXDEV) {
			return copyInto(from, dir, name)
		}
		return err
	})
}

// copyInto is Rename across file systems: the old entry at name is
// unlinked, and the new one created exclusively, so nothing is opened
// through a link.
func copyInto(from string, dir int, name string) error {
	var st unix.Stat_t
	if err := unix.Lstat(from, &st); err != nil {
		return err
	}
	if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		if err := unix.Symlinkat(target, dir, name); err != nil {
			return err
		}
		return os.Remove(from)
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o777)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(fd), name)
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Remove(from)
}

// at checks p, opens the folder holding it without following links and
// runs op on that folder and p's last name.
func (r *Root) at(op, p string, do func(dir int, name string) error) error {
	return r.in(op, p, false, do)
}

// in is at, making the missing folders first when mkdirs is set.
func (r *Root) in(op, p string, mkdirs bool, do func(dir int, name string) error) error {
	if err := Verify(p); err != nil {
		return &fs.PathError{Op: op, Path: p, Err: err}
	}
	parent, name := path.Split(p)
	dir := r.fd
	if parent != "" {
		parent = strings.TrimSuffix(parent, "/")
		var err error
		dir, err = r.openDir(parent)
		if mkdirs && errors.Is(err, unix.ENOENT) {
			dir, err = r.walk(parent, true)
		}
		if err != nil {
			return &fs.PathError{Op: op, Path: p, Err: err}
		}
		defer unix.Close(dir)
	}
	if err := do(dir, name); err != nil {
		return &fs.PathError{Op: op, Path: p, Err: err}
	}
	return nil
}

// noOpenat2 is set once openat2 is known to be missing (an old kernel, or a
// seccomp filter that refuses it): the walk does the same, one open a folder.
var noOpenat2 atomic.Bool

// openDir opens the folder dir (a verified path) beneath the top.
func (r *Root) openDir(dir string) (int, error) {
	if !noOpenat2.Load() {
		fd, err := openat2Beneath(r.fd, dir)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG) ||
			errors.Is(err, unix.EINVAL):
			noOpenat2.Store(true)
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EXDEV):
			// A rename raced the lookup: the walk below decides.
		default:
			return -1, notDir(err)
		}
	}
	return r.walk(dir, false)
}

// walk opens the folder dir beneath the top one name at a time, never
// following a link; with mkdirs it makes each missing folder on the way.
// An existing link or file on the way is ErrNotDir.
func (r *Root) walk(dir string, mkdirs bool) (int, error) {
	fd := r.fd
	for _, name := range strings.Split(dir, "/") {
		var err error
		if mkdirs {
			if err = unix.Mkdirat(fd, name, 0o777); errors.Is(err, unix.EEXIST) {
				err = nil
			}
		}
		next := -1
		if err == nil {
			next, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if fd != r.fd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, notDir(err)
		}
		fd = next
	}
	return fd, nil
}

// notDir turns "a link or a file on the way" into ErrNotDir; ENOENT stays.
func notDir(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		return ErrNotDir
	}
	return err
}

// fileInfo is Lstat's answer.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.st.Size }
func (f *fileInfo) ModTime() time.Time { return time.Unix(f.st.Mtim.Unix()) }
func (f *fileInfo) IsDir() bool        { return f.Mode().IsDir() }
func (f *fileInfo) Sys() any           { return &f.st }

func (f *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(f.st.Mode & 0o777)
	switch f.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}
