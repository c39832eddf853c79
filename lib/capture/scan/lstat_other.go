//go:build !amd64 && !arm64

package scan

import "syscall"

// lstatAt stats path (NUL-terminated) inside the folder dir.
func lstatAt(dir string, _ int, path []byte, st *syscall.Stat_t) error {
	return syscall.Lstat(dir+"/"+string(path[:len(path)-1]), st)
}
