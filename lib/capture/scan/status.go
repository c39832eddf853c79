// Package scan finds what changed in a tree since its index: git status's
// listing (ParseStatus), one lstat of each listed path (LstatAll), and the
// quick scan that stands for git status on the private index, with the
// scan record of the tree's folders it rests on (quick.go, record.go).
package scan

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/git-venom/git-venom/lib/treepath"
)

// Change is one path git status reported as different from the index.
type Change struct {
	Path      string
	Untracked bool
	Submodule string // porcelain v2 "S<c><m><u>" field, or ""
}

// ParseStatus reads `git status --porcelain=v2 -z` and keeps every path whose
// working-tree side differs from the index copy.
func ParseStatus(out []byte) ([]Change, error) {
	// One copy of the output, whose paths are then substrings of it: a
	// capture of 300,000 new files made a slice of records and a string
	// for each path.
	text := string(out)
	changes := make([]Change, 0, strings.Count(text, "\x00"))
	for len(text) > 0 {
		rec := text
		if end := strings.IndexByte(text, 0); end >= 0 {
			rec, text = text[:end], text[end+1:]
		} else {
			text = ""
		}
		if len(rec) == 0 {
			continue
		}
		switch rec[0] {
		case '1':
			// 1 XY sub mH mI mW hH hI path
			f := strings.SplitN(rec, " ", 9)
			if len(f) != 9 {
				return nil, fmt.Errorf("unexpected status line %q", rec)
			}
			xy, sub := f[1], f[2]
			s := ""
			if sub[0] == 'S' {
				s = sub
			}
			if xy[1] != '.' || (s != "" && s[1] == 'C') {
				changes = append(changes, Change{Path: f[8], Submodule: s})
			}
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 {
				return nil, fmt.Errorf("unexpected status line %q", rec)
			}
			changes = append(changes, Change{Path: f[10]})
		case '?':
			changes = append(changes, Change{Path: strings.TrimSuffix(rec[2:], "/"), Untracked: true})
		case '2':
			return nil, fmt.Errorf("unexpected rename in status output")
		}
	}
	return changes, nil
}

// Stat is one listed path's lstat, kept small: a capture of 300,000
// new files holds one each.
type Stat struct {
	Err          error
	Mode         uint32 // st_mode
	Size         int64
	Mtime, Ctime int64 // ns
	Ino, Dev     uint64
}

func (s *Stat) IsRegular() bool { return s.Mode&syscall.S_IFMT == syscall.S_IFREG }
func (s *Stat) IsLink() bool    { return s.Mode&syscall.S_IFMT == syscall.S_IFLNK }
func (s *Stat) IsDir() bool     { return s.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// LstatAll lstats each listed path, in changes' order. A steady capture
// of 300,000 untracked files is mostly these calls, so each is made
// relative to its folder, opened once for the run of paths in it (a
// listing is sorted, files of one folder together), which spares the
// kernel walking the whole path every time; and a few workers make them
// at once, since they wait on the kernel. The folder is opened as lstat
// walks a path, following links on the way: the answer is lstat's.
func LstatAll(top string, changes []Change) []Stat {
	return LstatInto(top, changes, nil)
}

// LstatInto is LstatAll into out's memory, when it is large enough.
func LstatInto(top string, changes []Change, out []Stat) []Stat {
	if cap(out) < len(changes) {
		out = make([]Stat, len(changes))
	}
	out = out[:len(changes)]
	parallelRanges(len(changes), func(start, end int) {
		dir := folderAt{top: top, fd: -1}
		defer dir.close()
		var name []byte
		var st syscall.Stat_t
		for i := start; i < end; i++ {
			p := changes[i].Path
			parent, base := treepath.Parent(p), p[strings.LastIndexByte(p, '/')+1:]
			var err error
			if fd := dir.open(parent); fd >= 0 {
				name = append(append(name[:0], base...), 0)
				err = lstatAt(dir.abs, fd, name, &st)
			} else {
				err = syscall.Lstat(treepath.Abs(top, p), &st)
			}
			if err != nil {
				out[i] = Stat{Err: &os.PathError{Op: "lstat", Path: p, Err: err}}
				continue
			}
			out[i] = Stat{Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev}
		}
	})
	return out
}

// folderAt keeps one folder of the tree open for lstatAt.
type folderAt struct {
	top  string
	path string
	abs  string // the folder's full path
	fd   int
	done bool
}

// open returns a descriptor of folder path ("" the top), or -1 when it
// cannot be opened (gone, not a folder, not readable): lstat of the whole
// path then says what it meets.
func (d *folderAt) open(path string) int {
	if d.done && d.path == path {
		return d.fd
	}
	d.close()
	d.path, d.abs, d.done = path, treepath.Abs(d.top, path), true
	fd, err := syscall.Open(d.abs, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err == nil {
		d.fd = fd
	}
	return d.fd
}

func (d *folderAt) close() {
	if d.fd >= 0 {
		syscall.Close(d.fd)
	}
	d.fd, d.done = -1, false
}
