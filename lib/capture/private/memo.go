package private

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/racy"
	"github.com/git-venom/git-venom/lib/repo"
)

// Memo is what one scan of the private index gave, keyed by what it saw:
// status's whole output and the stat data of every path it listed. A later
// scan that sees exactly the same has the same tree, since git's own stat
// cache vouches for every path status did not list. It stages and hashes
// nothing then: untracked files an agent leaves for several turns are not
// hashed again at every capture.
type Memo struct {
	Sig        string              `json:"sig"`
	Tree       string              `json:"tree"`
	Skipped    []journal.Skipped   `json:"skipped"`
	Submodules []journal.Submodule `json:"submodules"`
	// Listing is the digest of the listing (listing.go) that keys Tree
	// path by path, "" when there is none. Base is the private index's
	// tree and Env the digest of the limits and settings the scan ran
	// under: the listing holds only while both are the same.
	Listing string `json:"listing,omitempty"`
	Base    string `json:"base,omitempty"`
	Env     string `json:"env,omitempty"`
}

// EnvKey digests what, beside the files, decides a capture's tree: the
// limits and git's settings files (scan.FilesDigest).
func EnvKey(limits string, settings []string) string {
	h := sha256.New()
	h.Write([]byte(limits))
	scan.FilesDigest(h, settings)
	return hex.EncodeToString(h.Sum(nil))
}

// Signature keys a memo, or returns "" when the scan must not be reused:
// a listed path is a nested repository (its HEAD moves without its
// folder's stat data), or is racy against taken, when the scan began
// (lib/racy). The key holds limits (what was skipped as too big) and the
// settings files (what the clean filters make of the files).
func Signature(limits string, settings []string, status []byte, changes []scan.Change, stats []scan.Stat, taken time.Time) string {
	h := sha256.New()
	h.Write([]byte(limits))
	scan.FilesDigest(h, settings)
	h.Write(status)
	// Written a buffer at a time, as fmt would write them: 300,000 listed
	// files made 300,000 Fprintf calls.
	var b []byte
	for i, c := range changes {
		if c.Submodule != "" {
			return ""
		}
		st := &stats[i]
		b = append(append(append(b, 0), c.Path...), 0)
		switch {
		case st.Err != nil:
			b = append(b, "absent"...)
		case st.IsDir() || racy.Taken(st.Mtime, st.Ctime, taken):
			return ""
		default:
			b = strconv.AppendUint(b, uint64(st.Mode), 8)
			for _, n := range []int64{st.Size, st.Mtime, st.Ctime, int64(st.Ino), int64(st.Dev)} {
				b = strconv.AppendInt(append(b, ':'), n, 10)
			}
		}
		if len(b) > 32<<10 {
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// TreeIn is the memo's tree, if r still holds it: nothing holds a tree
// whose commit was never made.
func (m Memo) TreeIn(r *repo.Repo) (*git.Oid, error) {
	id, err := git.NewOid(m.Tree)
	if err != nil {
		return nil, err
	}
	odb, err := r.Odb()
	if err != nil {
		return nil, err
	}
	defer odb.Free()
	if !odb.Exists(id) {
		return nil, errors.New("the remembered tree is gone")
	}
	return id, nil
}
