//go:build !linux

package treepath

import "errors"

// CreateUnnamed: only Linux has unnamed files (O_TMPFILE).
func (f *Folder) CreateUnnamed(uint32) (int, error) { return -1, errors.ErrUnsupported }

// LinkUnnamed: only Linux has unnamed files.
func LinkUnnamed(int, int, string) error { return errors.ErrUnsupported }
