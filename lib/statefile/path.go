package statefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The state folder ($COMMON/venom) and everything in it are reached from
// "/" by OpenDir, following no link, so that no link anywhere on the way
// (a planted venom/, index/ or tmp/) can send a read or a write elsewhere.
// The paths git-venom gives are canonical (repo resolves every link when
// it finds the repository): a link met on the way was planted since.

// dirFlags open a folder to resolve names in, without reading it.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openParent opens the folder that holds path, link-free, and returns it
// with path's last component. With create, missing folders are made, with
// core.sharedRepository's mode as git gives its own.
func openParent(path string, create bool) (dir int, name string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return -1, "", err
	}
	parent, name := filepath.Split(abs)
	if name == "" || name == "." || name == ".." {
		return -1, "", &fs.PathError{Op: "open", Path: path, Err: unix.EINVAL}
	}
	dir, err = openDir(filepath.Clean(parent), create)
	return dir, name, err
}

// openDir opens the folder at the absolute, clean path abs, link-free
// (OpenDir from "/"), making what is missing when create is set.
func openDir(abs string, create bool) (int, error) {
	root, err := unix.Open("/", dirFlags, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	defer unix.Close(root)
	var mkdir Mkdir
	if create {
		mkdir = makeDir
	}
	fd, err := OpenDir(root, strings.TrimPrefix(abs, "/"), unix.O_PATH, mkdir)
	switch e := err.(type) {
	case *NotRegularError:
		e.Path = "/" + e.Path
	case *fs.PathError:
		e.Path = "/" + e.Path
	}
	return fd, err
}

// makeDir makes the state folder name in dir and opens it, with
// core.sharedRepository's mode as git gives its own; one another process
// made first is opened as it is.
func makeDir(dir int, name, at string) (int, error) {
	err := unix.Mkdirat(dir, name, 0o777)
	if err != nil && err != unix.EEXIST {
		return -1, err
	}
	made := err == nil
	if !made {
		return unix.Openat(dir, name, dirFlags, 0)
	}
	// Opened for reading, not O_PATH, so that fchmod can set its mode on
	// the folder itself, whatever replaced the name since.
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := adjustShared(fd, "/"+at, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// KindOf names a file type (a stat mode's S_IFMT bits) for messages: "a
// FIFO", "a symbolic link", ...
func KindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "symbolic link"
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFREG:
		return "regular file"
	}
	return "special file"
}

// MkdirAll makes the folder path and those above it that are missing,
// link-free, with core.sharedRepository's mode; a link or a file where a
// folder should be is refused.
func MkdirAll(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	fd, err := openDir(abs, true)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// Open opens the state file at path, reached without following any link,
// only if it is a regular file: a FIFO cannot block the open (O_NONBLOCK),
// and a link, FIFO, socket or device is refused with a NotRegularError.
// With O_CREATE its folders are made as MkdirAll makes them, and a file it
// creates gets core.sharedRepository's mode, as git gives its own files.
func Open(path string, flag int, perm os.FileMode) (*os.File, error) {
	dir, name, err := openParent(path, flag&os.O_CREATE != 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	return openIn(dir, name, path, flag, perm)
}

// openIn opens name in the folder dir as Open does.
func openIn(dir int, name, path string, flag int, perm os.FileMode) (*os.File, error) {
	flag |= unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW
	created := false
	fd := -1
	var err error
	if flag&unix.O_CREAT != 0 && flag&unix.O_EXCL == 0 {
		// Created here, or opened as it is: only a file this call
		// creates takes the shared mode, as git adjusts only its own.
		fd, err = unix.Openat(dir, name, flag|unix.O_EXCL, uint32(perm.Perm()))
		created = err == nil
		if err == unix.EEXIST {
			fd, err = unix.Openat(dir, name, flag&^unix.O_CREAT, 0)
		}
	} else {
		fd, err = unix.Openat(dir, name, flag, uint32(perm.Perm()))
		created = err == nil && flag&unix.O_CREAT != 0
	}
	if err != nil {
		switch err {
		case unix.ELOOP:
			return nil, &NotRegularError{Path: path, Kind: "symbolic link"}
		case unix.EISDIR:
			return nil, &NotRegularError{Path: path, Kind: "directory"}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &NotRegularError{Path: path, Kind: KindOf(st.Mode)}
	}
	// A state file opened for writing has one name: a hard link (as a
	// tarball can ship .git/venom/lock linked to a person's file) would
	// have the lock emptied, or the log's "torn tail" cut and appended
	// to, in the other file. Readers are let be: the events source is
	// linked into place, and has two names for a moment.
	if flag&(unix.O_WRONLY|unix.O_RDWR) != 0 && st.Nlink != 1 {
		unix.Close(fd)
		return nil, &NotRegularError{Path: path, Kind: "file with more than one name (a hard link)"}
	}
	if created {
		if err := adjustShared(fd, path, false); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// MaxFile bounds the state files ReadFile reads whole: the largest
// git-venom writes (a private index, a scan record, a memo's listing of a
// tree of millions of files) stay far below it.
const MaxFile = 1 << 30

// ErrTooLarge says a state file is larger than MaxFile: no file git-venom
// wrote, and nothing was read (a sparse file of 200 GB costs nothing on
// disk, and a buffer of its size ended the process, out of memory).
var ErrTooLarge = fmt.Errorf("larger than %d bytes: not a state file git-venom wrote", MaxFile)

// ReadFile reads the state file at path as Open opens it; one larger than
// MaxFile, or that grows past it while read, is ErrTooLarge.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// One buffer of the file's size, as os.ReadFile: io.ReadAll grows its
	// way there, which for the scan record and the memo's listing of a
	// large tree was twice their size again in garbage.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxFile {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	b := make([]byte, 0, int(fi.Size())+512)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) > MaxFile {
			return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Remove removes the file (or empty folder) at path, reached link-free; a
// link at path itself is removed, not followed. A missing one is no error.
func Remove(path string) error {
	dir, name, err := openParent(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	err = unix.Unlinkat(dir, name, 0)
	if err == unix.EISDIR {
		err = unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
	}
	if err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// RemoveAll removes path and what it holds, reached link-free: its folder
// is pinned by a descriptor and os.RemoveAll works beneath it through
// /proc/self/fd, where it never follows a link either.
func RemoveAll(path string) error {
	dir, name, err := openParent(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return os.RemoveAll(fmt.Sprintf("/proc/self/fd/%d/%s", dir, name))
}

// Rename moves the state file oldpath to newpath, both reached link-free;
// a link at newpath is replaced, not followed.
func Rename(oldpath, newpath string) error {
	return betweenParents("rename", oldpath, newpath, func(from int, oldName string, to int, newName string) error {
		return unix.Renameat(from, oldName, to, newName)
	})
}

// Link gives the state file oldpath the second name newpath, both reached
// link-free; it fails with fs.ErrExist when newpath is taken (link(2)
// never replaces nor follows what is there).
func Link(oldpath, newpath string) error {
	return betweenParents("link", oldpath, newpath, func(from int, oldName string, to int, newName string) error {
		return unix.Linkat(from, oldName, to, newName, 0)
	})
}

// betweenParents runs op on the folders of oldpath and newpath, both
// opened link-free (newpath's made if missing), with the last names.
func betweenParents(name, oldpath, newpath string, op func(from int, oldName string, to int, newName string) error) error {
	from, oldName, err := openParent(oldpath, false)
	if err != nil {
		return err
	}
	defer unix.Close(from)
	to, newName, err := openParent(newpath, true)
	if err != nil {
		return err
	}
	defer unix.Close(to)
	if err := op(from, oldName, to, newName); err != nil {
		return &os.LinkError{Op: name, Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

func absClean(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

func dirOf(path string) string { return filepath.Dir(absClean(path)) }
