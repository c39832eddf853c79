//go:build amd64 || arm64

package scan

import (
	"syscall"
	"unsafe"
)

const atSymlinkNoFollow = 0x100

// lstatAt stats path, NUL-terminated and relative to the folder open as
// fd, without following a last link and without allocating: a stat check
// makes one call per tracked file.
func lstatAt(_ string, fd int, path []byte, st *syscall.Stat_t) error {
	_, _, e := syscall.Syscall6(sysFstatat, uintptr(fd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(st)), atSymlinkNoFollow, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
