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
// The new file is written later than the old one, whose modification time
// is mtime: an entry racily clean against that time (lib/racy: its file
// modified in the same second as the index or after) would pass for clean
// against the new one. Each such entry not updated is smudged, as git does
// when it writes an index: its size becomes 0, which makes git and the
// quick scan read the file. For the same reason the untracked cache (UNTR), whose
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
