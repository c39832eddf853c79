package treepath

import (
	"errors"
	"io/fs"
	"syscall"
)

// NotDir says err means a folder on the way to a path is not a folder:
// ErrNotDir from a Root, or ENOTDIR from a plain lstat, open or read of a
// path whose parent is a file. The path is then not there, and the one
// test for it is this (no string matching, no second sentinel).
func NotDir(err error) bool {
	return errors.Is(err, ErrNotDir) || errors.Is(err, syscall.ENOTDIR)
}

// Gone says err means there is nothing at the path: it does not exist, or
// a folder on the way to it is not a folder (NotDir).
func Gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || NotDir(err)
}
