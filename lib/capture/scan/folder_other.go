//go:build !linux

package scan

import (
	"os"
	"syscall"
)

// readFolder stats the folder at full (not through a link) and lists its
// entries with their types.
func readFolder(full string, st *syscall.Stat_t, _ []byte) ([]folderEntry, error) {
	if err := syscall.Lstat(full, st); err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, syscall.ENOTDIR
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil, err
	}
	out := make([]folderEntry, 0, len(entries))
	for _, e := range entries {
		k := kindOther
		switch t := e.Type(); {
		case t.IsDir():
			k = kindDir
		case t.IsRegular():
			k = kindFile
		case t&os.ModeSymlink != 0:
			k = kindLink
		}
		out = append(out, folderEntry{name: e.Name(), kind: k})
	}
	return out, nil
}
