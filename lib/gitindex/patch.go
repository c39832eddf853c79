package gitindex

import (
	"bytes"
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

// Patch returns a copy of the index bytes data with each plain entry that
// updates names given its new id, mode and stat data (rewritten in place),
// and how many changed; other entries and missing paths are left alone.
// An entry racy against mtime and not updated is smudged, as git does;
// extensions that would go stale (UNTR, TREE, EOIE, IEOT, FSMN) are
// dropped and the checksum remade. A split index is ErrSplit.
func Patch(data []byte, updates map[string]Update, mtime time.Time) ([]byte, int, error) {
	if len(data) < 12+20 {
		return nil, 0, fmt.Errorf("not a git index")
	}
	st, err := parseStats(data)
	if err != nil {
		return nil, 0, err
	}
	byNumber := make(map[int]Update, len(updates))
	for i := range st.ents {
		if u, ok := updates[string(st.Path(i))]; ok {
			byNumber[i] = u
		}
	}
	var out bytes.Buffer
	out.Grow(len(data))
	n, err := st.WritePatched(&out, byNumber, mtime)
	if err != nil {
		return nil, 0, err
	}
	return out.Bytes(), n, nil
}
