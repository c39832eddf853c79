//go:build !linux

package treepath

import "golang.org/x/sys/unix"

// openat2Beneath: only Linux has openat2; the walk does the work.
func openat2Beneath(int, string) (int, error) { return -1, unix.ENOSYS }
