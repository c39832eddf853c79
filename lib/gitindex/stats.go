package gitindex

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"sort"
	"syscall"
	"time"
)

// Stat is the stat data git caches for an entry, each field as git stores
// it: truncated to 32 bits.
type Stat struct {
	CtimeSec, CtimeNsec, MtimeSec, MtimeNsec uint32
	Dev, Ino, Mode, UID, GID, Size           uint32
}

// Stats is an index read for a stat check of its files. It reads the
// entries in place, from the mapped file, and copies nothing it need not:
// a stat check runs on every capture, and on this kind of machine fresh
// memory costs more than the parse (a first touch of a page costs ~15 µs).
// Close unmaps it; nothing it returned may be used after.
type Stats struct {
	data  []byte // the mapped file, or its bytes
	paths []byte // every path, each followed by a NUL: data itself for v2 and v3
	ents  []ent
	// Members is a digest of the entries' paths alone: it moves when a
	// file is added to or removed from the index, not when a file's content
	// or stat data does.
	Members string
	// Mtime is the index file's own: git deems an entry racily clean when
	// the file was written in the same second or later.
	Mtime time.Time
	// Flagged: some entry is assume-unchanged, skip-worktree,
	// intent-to-add, a sparse directory, a gitlink or unmerged; git's
	// status treats those otherwise than by stat data.
	Flagged    bool
	Extensions []string
	mapped     bool
	// end is where the entries end: the first extension, or the checksum.
	end int
}

type ent struct {
	stat uint32 // offset of the entry's stat data in data
	path uint32 // offset of its path in paths
	plen uint32
}

// ReadStats maps the index at path for a stat check of its files.
func ReadStats(path string) (*Stats, error) {
	data, fi, err := mapIndex(path)
	if errors.Is(err, errNotMapped) {
		return nil, errors.New("not a git index, or too large")
	}
	if err != nil {
		return nil, err
	}
	var st *Stats
	if fault := catchFault(data, func() { st, err = parseStats(data) }); fault != nil || err != nil {
		syscall.Munmap(data)
		if fault == nil {
			return nil, err
		}
		// The file shrank under the mapping: read it the plain way.
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if st, err = parseStats(b); err != nil {
			return nil, err
		}
		st.Mtime = fi.ModTime()
		return st, nil
	}
	st.mapped = true
	st.Mtime = fi.ModTime()
	return st, nil
}

// ParseStats parses index bytes for a stat check.
func ParseStats(data []byte) (*Stats, error) { return parseStats(data) }

func parseStats(data []byte) (*Stats, error) {
	st := &Stats{data: data}
	if len(data) >= 12 {
		st.ents = make([]ent, 0, binary.BigEndian.Uint32(data[8:12])&0xffffff)
	}
	members := sha1.New()
	var built []byte // v4's paths, which the file compresses
	version, err := decode(data, func(r *rawEntry) {
		e := r.entry(false)
		if e.AssumeValid || e.SkipWorktree || e.IntentToAdd || e.SparseDir || e.Mode == 0o160000 || e.Stage != 0 {
			st.Flagged = true
		}
		n := ent{stat: uint32(offsetIn(data, r.stat)), plen: uint32(len(r.path))}
		if built != nil || offsetIn(data, r.path) < 0 {
			n.path = uint32(len(built))
			built = append(append(built, r.path...), 0)
		} else {
			n.path = uint32(offsetIn(data, r.path))
		}
		st.ents = append(st.ents, n)
		members.Write(r.path)
		members.Write(nul)
	}, func(sig string, b []byte) {
		if st.Extensions == nil {
			st.end = offsetIn(data, b)
		}
		st.Extensions = append(st.Extensions, sig)
	})
	if err != nil {
		return nil, err
	}
	if st.Extensions == nil {
		st.end = len(data) - 20
	}
	st.paths = data
	if version == 4 {
		st.paths = built
	}
	st.Members = hex.EncodeToString(members.Sum(nil))
	return st, nil
}

var nul = []byte{0}

// offsetIn is the offset of b inside data, or -1 when b lies elsewhere.
func offsetIn(data, b []byte) int {
	if len(b) == 0 || len(data) == 0 {
		return -1
	}
	off := cap(data) - cap(b)
	if off < 0 || off > len(data) || &data[off] != &b[0] {
		return -1
	}
	return off
}

// Guard runs fn, which reads s's entries (Stat, Path, CPath, Find), and
// returns ErrFault when the mapped file was cut short under it: without
// the guard that read kills the process (SIGBUS). Every read of a mapped
// Stats goes through a guard, and the guard holds on the calling
// goroutine only: a goroutine fn starts guards its own reads. After
// ErrFault, s's entries are not to be trusted; the caller gives up on
// the index (a capture takes a copy of the user's instead).
func (s *Stats) Guard(fn func()) error {
	if !s.mapped {
		fn()
		return nil
	}
	return catchFault(s.data, fn)
}

// Close unmaps the index.
func (s *Stats) Close() {
	if s.mapped {
		syscall.Munmap(s.data)
		s.mapped = false
	}
}

// Len is the number of entries.
func (s *Stats) Len() int { return len(s.ents) }

// Path is entry i's path, in the index's memory.
func (s *Stats) Path(i int) []byte {
	e := s.ents[i]
	return s.paths[e.path : e.path+e.plen]
}

// CPath is entry i's path with the NUL after it, for a system call.
func (s *Stats) CPath(i int) []byte {
	e := s.ents[i]
	return s.paths[e.path : e.path+e.plen+1]
}

// Stat is entry i's cached stat data.
func (s *Stats) Stat(i int) Stat {
	b := s.data[s.ents[i].stat:]
	u := func(k int) uint32 { return binary.BigEndian.Uint32(b[4*k:]) }
	return Stat{u(0), u(1), u(2), u(3), u(4), u(5), u(6), u(7), u(8), u(9)}
}

// Find returns the first entry whose path is at least p (entries are in
// path order).
func (s *Stats) Find(p []byte) int {
	return sort.Search(len(s.ents), func(i int) bool { return bytes.Compare(s.Path(i), p) >= 0 })
}
