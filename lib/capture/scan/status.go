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

// LstatAll lstats each listed path, in changes' order.
func LstatAll(top string, changes []Change) []Stat {
	out := make([]Stat, len(changes))
	var st syscall.Stat_t
	for i, c := range changes {
		if err := syscall.Lstat(treepath.Abs(top, c.Path), &st); err != nil {
			out[i].Err = &os.PathError{Op: "lstat", Path: c.Path, Err: err}
			continue
		}
		out[i] = Stat{Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev}
	}
	return out
}
