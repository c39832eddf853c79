package treepath

import (
	"path/filepath"
	"strings"
)

// Abs is the file system path of rel, a repository-relative path ("/"
// separated, as trees, logs and git print it; a trailing "/" of a folder
// is dropped), beneath the work tree's top. It only joins: a path from a
// tree, a log, a plan or a payload must have passed Verify first, and the
// result is reached through links like any path, so whatever writes or
// deletes in the tree goes through a Root instead.
func Abs(top, rel string) string { return filepath.Join(top, filepath.FromSlash(rel)) }

// Parent is the folder holding rel, a repository-relative path: "" for a
// path at the top.
func Parent(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}
