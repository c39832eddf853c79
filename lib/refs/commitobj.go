package refs

import (
	"crypto/sha1"
	"fmt"
	"time"

	git "github.com/libgit2/git2go/v34"
)

// CommitObject returns the checkpoint commit of tree, with head as its
// parent (none on an unborn HEAD), and its id, without writing it: the
// bytes libgit2's git_commit_create writes for Commit, so that the commit
// can join its capture's pack.
func CommitObject(tree, head *git.Oid, msg string, when time.Time) (*git.Oid, []byte) {
	sig := signature(when)
	b := fmt.Appendf(nil, "tree %s\n", tree)
	if head != nil {
		b = fmt.Appendf(b, "parent %s\n", head)
	}
	b = fmt.Appendf(b, "author %s\ncommitter %s\n\n%s", sig, sig, msg)
	h := sha1.New()
	fmt.Fprintf(h, "commit %d\x00", len(b))
	h.Write(b)
	var id git.Oid
	copy(id[:], h.Sum(nil))
	return &id, b
}

// signature is git_signature__writebuf's form of Name, Email and when.
func signature(when time.Time) string {
	_, offset := when.Zone()
	offset /= 60
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", Name, Email, uint32(when.Unix()), sign, offset/60, offset%60)
}
