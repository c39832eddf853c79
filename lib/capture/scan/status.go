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

// LstatAll lstats each listed path, in changes' order, relative to its
// folder, opened once for the run of its files, and a few at a time: a
// steady capture of 300,000 untracked files is mostly these calls. The
// folder is reached following no link, as git reaches it: a file under a
// folder replaced by a link is gone for git, and not read through it.
func LstatAll(top string, changes []Change) []Stat {
	return LstatInto(top, changes, nil)
}

// LstatOne is LstatAll of one path.
func LstatOne(top, p string) Stat { return LstatAll(top, []Change{{Path: p}})[0] }

// LstatInto is LstatAll into out's memory, when it is large enough.
func LstatInto(top string, changes []Change, out []Stat) []Stat {
	if cap(out) < len(changes) {
		out = make([]Stat, len(changes))
	}
	out = out[:len(changes)]
	base, err := syscall.Open(top, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		base = -1
	} else {
		defer syscall.Close(base)
	}
	lstatEach(top, base, changes, out)
	return out
}

// lstatEach is LstatInto by one fstatat a path, on a few threads.
func lstatEach(top string, base int, changes []Change, out []Stat) {
	parallelRanges(len(changes), func(start, end int) {
		dir := folderAt{top: top, base: base, fd: -1}
		defer dir.close()
		var name []byte
		for i := start; i < end; i++ {
			out[i] = dir.lstatPath(changes[i].Path, &name)
		}
	})
}

// lstatPath lstats p through d, name being a buffer for its last part.
func (d *folderAt) lstatPath(p string, name *[]byte) Stat {
	cut := strings.LastIndexByte(p, '/')
	*name = append(append((*name)[:0], p[cut+1:]...), 0)
	var st syscall.Stat_t
	err := d.lstat(p[:max(cut, 0)], *name, &st)
	return statFrom(p, &st, err)
}

// statFrom is path p's Stat from its lstat st, or err.
func statFrom(p string, st *syscall.Stat_t, err error) Stat {
	if err != nil {
		return Stat{Err: &os.PathError{Op: "lstat", Path: p, Err: err}}
	}
	return Stat{Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: st.Ino, Dev: st.Dev}
}

// folderAt keeps one folder of the tree open for lstatAt, reached from
// the top (base) without following a link.
type folderAt struct {
	top  string
	base int // the top, opened by the caller; -1 when it could not be
	path string
	abs  string // the folder's full path
	fd   int
	err  error // why the folder could not be opened
	done bool
}

// lstat stats name (NUL-terminated) in folder parent ("" the top). A link
// or a file on parent's way makes it gone, as for git; a folder that
// cannot be opened otherwise (unreadable) is left to lstat of the whole
// path.
func (d *folderAt) lstat(parent string, name []byte, st *syscall.Stat_t) error {
	if !d.done || d.path != parent {
		d.open(parent)
	}
	return d.lstatIn(name, st)
}

// lstatIn stats name in the folder open now.
func (d *folderAt) lstatIn(name []byte, st *syscall.Stat_t) error {
	switch {
	case d.fd >= 0:
		return lstatAt(d.abs, d.fd, name, st)
	case d.err != nil && treepath.Gone(d.err):
		return d.err
	}
	return syscall.Lstat(treepath.Abs(d.abs, string(name[:len(name)-1])), st)
}

func (d *folderAt) open(path string) {
	d.close()
	d.path, d.abs, d.done = path, treepath.Abs(d.top, path), true
	switch {
	case d.base < 0:
	case path == "":
		d.fd = d.base
	default:
		d.fd, d.err = treepath.OpenDirBeneath(d.base, path)
	}
	if d.err != nil {
		d.fd = -1
	}
}

func (d *folderAt) close() {
	if d.fd >= 0 && d.fd != d.base {
		syscall.Close(d.fd)
	}
	d.fd, d.err, d.done = -1, nil, false
}

// unopenedPrefix starts the warning git's untracked scan prints for a
// folder it cannot open (dir.c open_cached_dir, git 2.39:
// warning_errno(_("could not open directory '%s'"))); git runs under
// LC_ALL=C (gitcli), so the words are these. git then goes on as if the
// folder were empty: nothing under it is listed.
const unopenedPrefix = "warning: could not open directory '"

// Unopened reads git status's standard error for the folders git could
// not open (deeper than PATH_MAX, or unreadable), as paths relative to the
// top ending in '/'. A message runs to the next line that starts another
// of git's messages and its path to the last "': ", so quotes and newlines
// in a name are read whole. git cuts messages at 4096 bytes (usage.c), so a
// path past PATH_MAX comes cut short and names an ancestor of the folder.
func Unopened(stderr []byte) []string {
	text := "\n" + string(stderr)
	var out []string
	for {
		i := strings.Index(text, "\n"+unopenedPrefix)
		if i < 0 {
			return out
		}
		text = text[i+1+len(unopenedPrefix):]
		msg := text[:nextMessage(text)]
		p := ""
		if cut := strings.LastIndex(msg, "': "); cut >= 0 {
			if strings.TrimSpace(msg[cut+3:]) == "No such file or directory" {
				continue
			}
			p = strings.TrimSuffix(msg[:cut], "/")
		} else if cut := strings.LastIndexByte(msg, '/'); cut >= 0 {
			p = msg[:cut] // cut short: the last whole folder
		}
		if p == "" || p == "." {
			continue
		}
		out = append(out, p+"/")
	}
}

// nextMessage is where the next of git's messages starts in text, or its
// length.
func nextMessage(text string) int {
	for at := 0; ; {
		j := strings.IndexByte(text[at:], '\n')
		if j < 0 {
			return len(text)
		}
		at += j
		for _, p := range []string{"warning: ", "error: ", "fatal: ", "hint: "} {
			if strings.HasPrefix(text[at+1:], p) {
				return at
			}
		}
		at++
	}
}
