package gitindex

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"syscall"
	"time"
)

// Stat is the stat data git caches for an entry, each field as git stores
// it: truncated to 32 bits.
type Stat struct {
	CtimeSec, CtimeNsec, MtimeSec, MtimeNsec uint32
	Dev, Ino, Mode, UID, GID, Size           uint32
}

// StatEntry is one entry with its cached stat data.
type StatEntry struct {
	Path  string
	Stat  Stat
	Stage int
	// Flagged: assume-unchanged, skip-worktree, intent-to-add, a sparse
	// directory or a gitlink; git's status treats it otherwise than by stat.
	Flagged bool
}

// Stats is an index read for a stat check of its files.
type Stats struct {
	Entries []StatEntry // in the index's order, which is by path bytes
	// Members is a digest of the entries' paths alone: it moves when a
	// file is added to or removed from the index, not when a file's content
	// or stat data does.
	Members string
	// Mtime is the index file's own: git deems an entry racily clean when
	// the file was written in the same second or later.
	Mtime      time.Time
	Extensions []string
}

// ReadStats reads the index at path with every entry's stat data.
func ReadStats(path string) (*Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < 12+20 || fi.Size() != int64(int(fi.Size())) {
		return nil, errors.New("not a git index")
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	defer syscall.Munmap(data)
	st, err := parseStatsMapped(data, path)
	if err != nil {
		return nil, err
	}
	st.Mtime = fi.ModTime()
	return st, nil
}

// parseStatsMapped is ParseStats of a mapping; a fault (the file shrank
// under it) reads the file the plain way.
func parseStatsMapped(data []byte, path string) (st *Stats, err error) {
	if fault := catchFault(func() { st, err = ParseStats(data) }); fault != nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return ParseStats(b)
	}
	return st, err
}

// ParseStats parses index bytes with every entry's stat data.
func ParseStats(data []byte) (*Stats, error) {
	st := &Stats{}
	// The paths go into one buffer, and every Path is a slice of one
	// string made of it: two allocations instead of one per entry.
	var buf []byte
	var ends []int
	members := sha1.New()
	_, err := decode(data, func(r *rawEntry) {
		e := r.entry(false)
		s := Stat{}
		fields := []*uint32{&s.CtimeSec, &s.CtimeNsec, &s.MtimeSec, &s.MtimeNsec, &s.Dev, &s.Ino, &s.Mode, &s.UID, &s.GID, &s.Size}
		for i, f := range fields {
			*f = binary.BigEndian.Uint32(r.stat[4*i : 4*i+4])
		}
		st.Entries = append(st.Entries, StatEntry{Stat: s, Stage: e.Stage,
			Flagged: e.AssumeValid || e.SkipWorktree || e.IntentToAdd || e.SparseDir || e.Mode == 0o160000})
		buf = append(buf, r.path...)
		ends = append(ends, len(buf))
		members.Write(r.path)
		members.Write([]byte{0})
	}, func(sig string) { st.Extensions = append(st.Extensions, sig) })
	if err != nil {
		return nil, err
	}
	all := string(buf)
	start := 0
	for i, end := range ends {
		st.Entries[i].Path = all[start:end]
		start = end
	}
	st.Members = hex.EncodeToString(members.Sum(nil))
	return st, nil
}
