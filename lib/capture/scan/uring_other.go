//go:build !linux || !(amd64 || arm64)

package scan

import "syscall"

// ringStat: io_uring is Linux's (uring_linux.go); elsewhere every path
// is stat'ed by its own call.
func ringStat(string, int, int, func(int) string, func(int, *syscall.Stat_t, error)) bool {
	return false
}
