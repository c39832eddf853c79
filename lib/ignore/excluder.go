package ignore

import "strings"

// Excluder matches paths against one list of gitignore patterns applied
// from the worktree top, as core.excludesFile's are (venom.exclude). Unlike
// a Stack walk, it is asked about one path at a time, in any order, so it
// keeps the Stack of each folder it has met.
type Excluder struct {
	root   *Stack
	stacks map[string]*Stack // folder "a/b/" → its Stack
}

// NewExcluder returns the Excluder of patterns, each one or more lines of
// gitignore syntax; nil when there is none, so that callers can skip the
// check.
func NewExcluder(patterns []string) *Excluder {
	l := Parse([]byte(strings.Join(patterns, "\n")), "")
	if len(l.patterns) == 0 {
		return nil
	}
	root := Root(l).Top(nil)
	return &Excluder{root: root, stacks: map[string]*Stack{"": root}}
}

// Excluded reports whether path (relative to the top, '/'-separated, a
// file unless isDir) is excluded, and at which path: the shallowest
// excluded folder holding it, ending in '/', or path itself. As for git, a
// negative pattern re-includes nothing inside an excluded folder. A nil
// Excluder excludes nothing.
func (x *Excluder) Excluded(path string, isDir bool) (at string, ok bool) {
	if x == nil {
		return "", false
	}
	path = strings.TrimSuffix(path, "/")
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i+1], path[i+1:]
	}
	s := x.stack(dir)
	if s.DirExcluded() {
		return x.shallowest(dir), true
	}
	if s.Excluded(name, isDir) {
		if isDir {
			return path + "/", true
		}
		return path, true
	}
	return "", false
}

// stack returns the Stack of folder dir ("" or ending in '/').
func (x *Excluder) stack(dir string) *Stack {
	if s, ok := x.stacks[dir]; ok {
		return s
	}
	trimmed := strings.TrimSuffix(dir, "/")
	parent, name := "", trimmed
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 {
		parent, name = trimmed[:i+1], trimmed[i+1:]
	}
	s := x.stack(parent).Child(name, nil)
	x.stacks[dir] = s
	return s
}

// shallowest is the first folder on the way to dir that is excluded.
func (x *Excluder) shallowest(dir string) string {
	for i := 0; i < len(dir); i++ {
		if dir[i] == '/' && x.stack(dir[:i+1]).DirExcluded() {
			return dir[:i+1]
		}
	}
	return dir
}

// EscapePath returns a pattern that matches exactly the folder or file at
// path (relative to the top): anchored with a leading '/', a folder with a
// trailing '/', and every character gitignore would read specially
// escaped with a backslash.
func EscapePath(path string, isDir bool) string {
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '*', '?', '[', '\\', '!', '#', ' ':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if isDir && !strings.HasSuffix(path, "/") {
		b.WriteByte('/')
	}
	return b.String()
}
