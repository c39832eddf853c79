package scan

import (
	"syscall"
	"unsafe"
)

// readFolder opens the folder at full (not through a link), stats it and
// lists its entries, in the order the file system gives them, with their
// types: one open, the getdents calls and one close, into buf, where
// os.ReadDir also made an os.File, an entry object a name and a sorted
// copy. An entry whose type the file system does not give (DT_UNKNOWN) is
// stat'ed in the folder.
func readFolder(full string, st *syscall.Stat_t, buf []byte) ([]folderEntry, error) {
	fd, err := syscall.Open(full, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if err := syscall.Fstat(fd, st); err != nil {
		return nil, err
	}
	var out []folderEntry
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, name NUL-terminated.
			if len(b) < 19 {
				return nil, syscall.EIO
			}
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				return nil, syscall.EIO
			}
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if len(name) == 0 || name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') {
				continue
			}
			e := folderEntry{name: string(name)}
			switch typ {
			case syscall.DT_DIR:
				e.kind = kindDir
			case syscall.DT_REG:
				e.kind = kindFile
			case syscall.DT_LNK:
				e.kind = kindLink
			case syscall.DT_UNKNOWN:
				var est syscall.Stat_t
				if lstatAt(full, fd, append([]byte(e.name), 0), &est) != nil {
					continue // gone meanwhile
				}
				e.kind = kindOf(est.Mode)
			}
			out = append(out, e)
		}
	}
}

// kindOf is the entry kind of a stat mode.
func kindOf(mode uint32) entryKind {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return kindDir
	case syscall.S_IFREG:
		return kindFile
	case syscall.S_IFLNK:
		return kindLink
	}
	return kindOther
}
