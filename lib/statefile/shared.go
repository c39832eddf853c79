package statefile

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Shared is core.sharedRepository as git reads it (git_config_perm in
// setup.c): 0 for umask (the default), a positive value for permission
// bits added to what the umask leaves (0660 group, 0664 everybody), a
// negative one for exactly the bits of an octal mode ("0640" is -0640).
type Shared int

// The values git_config_perm gives names to.
const (
	SharedUmask     Shared = 0
	SharedGroup     Shared = 0o660
	SharedEverybody Shared = 0o664
)

// ParseShared reads a core.sharedRepository value as git 2.39 does; set is
// false for a key written without "=" (git's NULL value, which means group).
func ParseShared(value string, set bool) (Shared, error) {
	if !set {
		return SharedGroup, nil
	}
	switch value {
	case "umask":
		return SharedUmask, nil
	case "group":
		return SharedGroup, nil
	case "all", "world", "everybody":
		return SharedEverybody, nil
	}
	// strtol(value, 8): leading blanks and a sign, then octal digits.
	i, err := strconv.ParseInt(strings.TrimLeft(value, " \t\n\v\f\r"), 8, 32)
	if err != nil {
		// Not octal: a boolean, as git_config_bool reads one (a word,
		// or any integer git_parse_int takes: nonzero is true).
		if n, ok := gitInt(value); ok {
			if n != 0 {
				return SharedGroup, nil
			}
			return SharedUmask, nil
		}
		switch strings.ToLower(value) {
		case "true", "yes", "on":
			return SharedGroup, nil
		case "false", "no", "off", "":
			return SharedUmask, nil
		}
		return 0, fmt.Errorf("bad boolean config value %q for core.sharedRepository", value)
	}
	switch i {
	case 0:
		return SharedUmask, nil
	case 1:
		return SharedGroup, nil
	case 2:
		return SharedEverybody, nil
	}
	if i&0o600 != 0o600 {
		return 0, fmt.Errorf("core.sharedRepository %q: the owner of files must always have read and write permissions", value)
	}
	// Others never get write permission; x bits are the folders' affair.
	return Shared(-(i & 0o666)), nil
}

// gitInt is git_parse_int: strtoimax(value, 0), so decimal, 0x hex or 0
// octal after blanks and a sign, then an optional k, m or g.
func gitInt(value string) (int64, bool) {
	v := strings.TrimLeft(value, " \t\n\v\f\r")
	unit := int64(1)
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k', 'K':
			unit, v = 1<<10, v[:n-1]
		case 'm', 'M':
			unit, v = 1<<20, v[:n-1]
		case 'g', 'G':
			unit, v = 1<<30, v[:n-1]
		}
	}
	digits := strings.ToLower(strings.TrimLeft(v, "+-"))
	// Go's base 0 also reads 0b, 0o and underscores, which C does not.
	if strings.ContainsRune(digits, '_') || strings.HasPrefix(digits, "0b") || strings.HasPrefix(digits, "0o") {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 0, 64)
	return n * unit, err == nil
}

// Mode is calc_shared_perm, with adjust_shared_perm's folder rule: the
// mode git gives a file or folder that was made with mode (its bits after
// the umask).
func (s Shared) Mode(mode uint32, isDir bool) uint32 {
	if s == SharedUmask {
		return mode
	}
	tweak := uint32(s)
	if s < 0 {
		tweak = uint32(-s)
	}
	if mode&0o200 == 0 {
		tweak &^= 0o222
	}
	if mode&0o100 != 0 {
		tweak |= (tweak & 0o444) >> 2
	}
	if s < 0 {
		mode = mode&^0o777 | tweak
	} else {
		mode |= tweak
	}
	if isDir {
		mode |= (mode & 0o444) >> 2
		// g+s only where the group is granted something.
		if mode&0o060 != 0 {
			mode |= unix.S_ISGID
		}
	}
	return mode
}

// roots maps a repository's common dir to how its core.sharedRepository is
// read, once, the first time something is made beneath it.
var roots sync.Map // string → *sharedRoot

type sharedRoot struct {
	once sync.Once
	read func() (Shared, error)
	s    Shared
	err  error
}

// Share says that files and folders made beneath dir (a repository's
// common dir) follow the core.sharedRepository that read returns; read is
// called at most once, and only when something is made there.
func Share(dir string, read func() (Shared, error)) {
	roots.LoadOrStore(filepath.Clean(dir), &sharedRoot{read: read})
}

// sharedFor is the setting of the repository that holds path.
func sharedFor(path string) (Shared, error) {
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if v, ok := roots.Load(d); ok {
			r := v.(*sharedRoot)
			r.once.Do(func() { r.s, r.err = r.read() })
			return r.s, r.err
		}
		if d == filepath.Dir(d) {
			return SharedUmask, nil
		}
	}
}

// adjustShared gives the file or folder open at fd, just made at path,
// the mode core.sharedRepository asks for (adjust_shared_perm).
func adjustShared(fd int, path string, isDir bool) error {
	s, err := sharedFor(path)
	if err != nil || s == SharedUmask {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	old := st.Mode &^ unix.S_IFMT
	if mode := s.Mode(old, isDir); mode != old {
		return unix.Fchmod(fd, mode)
	}
	return nil
}

// AdjustShared gives a file or folder that another library made beneath a
// shared repository (a ref libgit2 wrote) the mode git would have given
// it; like Open, it follows no link on the way or at the end.
func AdjustShared(path string) error {
	s, err := sharedFor(absClean(path))
	if err != nil || s == SharedUmask {
		return err
	}
	dir, name, err := openParent(path, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return adjustShared(fd, path, st.Mode&unix.S_IFMT == unix.S_IFDIR)
}

// AdjustSharedBelow is AdjustShared for path and for each folder above it
// up to base (base itself left as it is): what another library wrote at
// path, with the folders it made for it. A folder whose mode is already
// right is not touched, so folders other users made are left alone.
func AdjustSharedBelow(base, path string) error {
	base, path = absClean(base), absClean(path)
	var first error
	for p := path; strings.HasPrefix(p, base+"/"); p = filepath.Dir(p) {
		if err := AdjustShared(p); err != nil && first == nil {
			first = err
		}
	}
	return first
}
