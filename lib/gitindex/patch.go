package gitindex

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"time"
)

// Update is new content for one index entry: the object id and mode of
// what was just written to the file at its path, and that file's stat data
// (Stat.Mode is the entry's new mode).
type Update struct {
	Oid  [20]byte
	Stat Stat
}

// Patch returns a copy of the index bytes data in which each entry that
// updates names takes its new object id, mode and stat data, and how many
// entries changed. Only plain entries change: unmerged, assume-unchanged,
// skip-worktree and intent-to-add entries, gitlinks and sparse folders are
// left as they are, and a path the index lacks is not added. Entries keep
// their size, so they are rewritten in place.
//
// The new file is written later than the old one, whose modification time
// is mtime: an entry racily clean against that time (its file modified in
// the same instant as the index or after) would pass for clean against the
// new one. Each such entry not updated is smudged, as git does when it
// writes an index: its size becomes 0, which makes git and the quick scan
// read the file. For the same reason the untracked cache (UNTR), whose
// folders' stat data is judged against the index's time, goes; so do the
// cache tree (TREE), which no longer holds for the folders above the
// updated entries, the extensions that describe the file's layout (EOIE,
// IEOT) and the file system monitor's (FSMN), all optional and made again
// by git when it needs them. The others stay, and the checksum is made
// again. A split index is refused (ErrSplit).
func Patch(data []byte, updates map[string]Update, mtime time.Time) ([]byte, int, error) {
	if len(data) < 12+20 {
		return nil, 0, fmt.Errorf("not a git index")
	}
	out := append([]byte(nil), data...)
	changed := 0
	var exts [][]byte
	entriesEnd := -1
	sec, nsec := uint32(mtime.Unix()), uint32(mtime.Nanosecond())
	_, err := decode(out, func(r *rawEntry) {
		e := r.entry(false)
		u, ok := updates[string(r.path)]
		if ok && e.Stage == 0 && !e.AssumeValid && !e.SkipWorktree && !e.IntentToAdd && !e.SparseDir &&
			e.Mode != 0o160000 && u.Stat.Mode != 0o160000 && u.Stat.Mode != 0o040000 {
			s := u.Stat
			for k, v := range []uint32{s.CtimeSec, s.CtimeNsec, s.MtimeSec, s.MtimeNsec, s.Dev, s.Ino, s.Mode, s.UID, s.GID, s.Size} {
				binary.BigEndian.PutUint32(r.stat[4*k:], v)
			}
			copy(r.oid, u.Oid[:])
			changed++
			return
		}
		msec, mnsec := binary.BigEndian.Uint32(r.stat[8:]), binary.BigEndian.Uint32(r.stat[12:])
		if sec < msec || sec == msec && nsec <= mnsec {
			binary.BigEndian.PutUint32(r.stat[36:], 0)
		}
	}, func(sig string, b []byte) {
		if entriesEnd < 0 {
			entriesEnd = offsetIn(out, b)
		}
		switch sig {
		case "TREE", "UNTR", "EOIE", "IEOT", "FSMN":
		default:
			exts = append(exts, b)
		}
	})
	if err != nil {
		return nil, 0, err
	}
	if entriesEnd < 0 {
		entriesEnd = len(out) - 20
	}
	patched := out[:entriesEnd:entriesEnd]
	for _, b := range exts {
		patched = append(patched, b...)
	}
	sum := sha1.Sum(patched)
	return append(patched, sum[:]...), changed, nil
}
