package gitindex

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"sort"
	"time"

	"github.com/git-venom/git-venom/lib/racy"
)

// Update is new content for one index entry: the object id and mode of
// what was just written to the file at its path, and that file's stat data
// (Stat.Mode is the entry's new mode).
type Update struct {
	Oid  [20]byte
	Stat Stat
}

// WritePatched writes to w the index s was read from, each plain entry
// that updates names by number (s.Find) given its new id, mode and stat
// data; an entry racy against mtime and not updated is smudged, as git
// does; extensions that would go stale (UNTR, TREE, EOIE, IEOT, FSMN) are
// dropped and the checksum remade. It returns how many entries changed.
// The index is streamed, never copied whole: at 100,000 files each copy
// was a fresh 10 MB buffer, every page of it a fault.
func (s *Stats) WritePatched(w io.Writer, updates map[int]Update, mtime time.Time) (changed int, err error) {
	if fault := s.Guard(func() { changed, err = s.writePatched(w, updates, mtime) }); fault != nil {
		return 0, fault
	}
	return changed, err
}

// plain says whether the entry whose stat data starts at off may take an
// update: not unmerged, assume-unchanged, skip-worktree or intent-to-add,
// neither a gitlink nor a sparse folder (rawEntry.entry's reading).
func (s *Stats) plain(off int) bool {
	mode := binary.BigEndian.Uint32(s.data[off+24:])
	flags := binary.BigEndian.Uint16(s.data[off+60:])
	var ext uint16
	if flags&0x4000 != 0 {
		ext = binary.BigEndian.Uint16(s.data[off+62:])
	}
	return flags&0x3000 == 0 && flags&0x8000 == 0 && ext&(0x4000|0x2000) == 0 && mode != 0o040000 && mode != 0o160000
}

// patchAt is a few bytes of the output that differ from the index's.
type patchAt struct {
	off int
	b   []byte
}

func (s *Stats) writePatched(w io.Writer, updates map[int]Update, mtime time.Time) (int, error) {
	if s.end < 12 || s.end > len(s.data)-20 {
		return 0, errors.New("not a git index")
	}
	var patches []patchAt
	changed := 0
	zero := make([]byte, 4)
	for i, e := range s.ents {
		u, ok := updates[i]
		if ok && u.Stat.Mode != 0o160000 && u.Stat.Mode != 0o040000 && s.plain(int(e.stat)) {
			// The stat data and the object id that follows it.
			b := make([]byte, 40+20)
			st := u.Stat
			for k, v := range []uint32{st.CtimeSec, st.CtimeNsec, st.MtimeSec, st.MtimeNsec, st.Dev, st.Ino, st.Mode, st.UID, st.GID, st.Size} {
				binary.BigEndian.PutUint32(b[4*k:], v)
			}
			copy(b[40:], u.Oid[:])
			patches = append(patches, patchAt{int(e.stat), b})
			changed++
			continue
		}
		// Racy against the index read (git's rule, lib/racy): the new
		// index is written later, against which the entry would pass for
		// clean.
		if racy.Entry(binary.BigEndian.Uint32(s.data[e.stat+8:]), mtime) {
			patches = append(patches, patchAt{int(e.stat) + 36, zero})
		}
	}
	// Entries are in file order already; the sort only guards that.
	sort.Slice(patches, func(i, j int) bool { return patches[i].off < patches[j].off })
	sum := sha1.New()
	out := io.MultiWriter(w, sum)
	pos := 0
	for _, p := range patches {
		if _, err := out.Write(s.data[pos:p.off]); err != nil {
			return 0, err
		}
		if _, err := out.Write(p.b); err != nil {
			return 0, err
		}
		pos = p.off + len(p.b)
	}
	if _, err := out.Write(s.data[pos:s.end]); err != nil {
		return 0, err
	}
	// The extensions Patch keeps, in their order.
	body := s.data[:len(s.data)-20]
	for off := s.end; off+8 <= len(body); {
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		next := off + 8 + size
		if size < 0 || next > len(body) {
			return 0, errors.New("index extension truncated")
		}
		switch string(body[off : off+4]) {
		case "TREE", "UNTR", "EOIE", "IEOT", "FSMN":
		default:
			if _, err := out.Write(body[off:next]); err != nil {
				return 0, err
			}
		}
		off = next
	}
	_, err := w.Write(sum.Sum(nil))
	return changed, err
}
