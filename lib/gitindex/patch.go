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

// Patch returns a copy of the index bytes data in which each entry that
// updates names takes its new object id, mode and stat data, and how many
// entries changed. Only plain entries change: unmerged, assume-unchanged,
// skip-worktree and intent-to-add entries, gitlinks and sparse folders are
// left as they are, and a path the index lacks is not added. Entries keep
// their size, so they are rewritten in place.
//
// An entry racy against mtime, the old file's time (lib/racy), and not
// updated is smudged (size 0) as git does, since the new file is written
// later. The optional extensions that would go stale (UNTR, TREE, EOIE,
// IEOT, FSMN) are dropped for git to make again; the checksum is made
// again. A split index is refused (ErrSplit).
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
