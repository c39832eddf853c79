//go:build !linux || !(amd64 || arm64)

package scan

// ringLstat: io_uring is Linux's (uring_linux.go); elsewhere every path
// is stat'ed by LstatInto's own calls.
func ringLstat(string, int, []Change, []Stat) bool { return false }
