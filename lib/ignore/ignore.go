// Package ignore decides which paths of a worktree git 2.39 ignores,
// without running git, so a capture lists untracked files as `git status
// --untracked-files=all` does: a port of dir.c's exclude stack and of
// wildmatch.c, case-sensitive. Walk: s := Root(infoExclude,
// excludesFile).Top(topGitignore), s.Excluded(name, isDir) per entry, and
// s.Child only into folders not excluded; the caller finds pattern files
// as git would.
package ignore

import (
	"bytes"
	"strings"
)

// Pattern flags, as git's PATTERN_FLAG_*.
const (
	flagNoDir     = 1  // no '/' but a trailing one: match the basename
	flagEndsWith  = 4  // "*literal": a suffix compare
	flagMustBeDir = 8  // trailing '/': directories only
	flagNegative  = 16 // leading '!': re-include
)

// maxFileSize is git's PATTERN_MAX_FILE_SIZE: git warns and skips a larger
// .gitignore, and dies on a larger info/exclude or core.excludesFile.
const maxFileSize = 100 << 20

// pattern is one parsed line (git's struct path_pattern).
type pattern struct {
	text   string // without the '!' and the trailing '/'
	noWild int    // length of the leading part without glob specials
	flags  int
}

// List is the patterns of one ignore source (a .gitignore, info/exclude,
// core.excludesFile).
type List struct {
	base        string // the directory the source applies to, "" or "a/b/"
	dir         string // base without its trailing '/', as git's match_pathname takes it
	patterns    []pattern
	unsupported bool
}

// Parse follows git's add_patterns_from_buffer: skips a UTF-8 BOM, splits on
// '\n', drops a '\r' before it, skips empty lines and lines starting with
// '#', trims trailing unescaped spaces, then parses each line as git's
// parse_path_pattern. base is the directory the source applies to, relative
// to the worktree top: "" for the top and for global files, else ending in
// '/' like "a/b/".
func Parse(content []byte, base string) *List {
	l := &List{base: base, dir: strings.TrimSuffix(base, "/")}
	if len(content) >= maxFileSize {
		// git adds a '\n' then refuses size > maxFileSize.
		l.unsupported = true
		return l
	}
	content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	for len(content) > 0 {
		// git appends a '\n' to the file, so a last line without
		// one still counts.
		line := content
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			content = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		// git handles lines as C strings: a NUL ends the line.
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		l.patterns = append(l.patterns, parsePattern(trimTrailingSpaces(string(line))))
	}
	return l
}

// Unsupported reports whether the list needs what this package does not
// reproduce: only a source of 100 MiB or more, which git skips with a warning
// (.gitignore) or refuses (global files). The caller then runs git.
func (l *List) Unsupported() bool {
	return l != nil && l.unsupported
}

// trimTrailingSpaces is git's trim_trailing_spaces: spaces at the end go,
// unless escaped by a backslash; a line ending in a lone backslash keeps its
// spaces before it. Tabs stay.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// simpleLength is git's simple_length: the length of s before its first glob
// special.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// parsePattern is git's parse_path_pattern.
func parsePattern(s string) pattern {
	var x pattern
	if strings.HasPrefix(s, "!") {
		x.flags |= flagNegative
		s = s[1:]
	}
	n := len(s)
	if n > 0 && s[n-1] == '/' {
		n--
		x.flags |= flagMustBeDir
	}
	if strings.IndexByte(s[:n], '/') < 0 {
		x.flags |= flagNoDir
	}
	// git measures the literal prefix with the trailing '/' still there,
	// then caps it at the pattern's length.
	x.noWild = min(simpleLength(s), n)
	if strings.HasPrefix(s, "*") && simpleLength(s[1:]) == len(s)-1 {
		x.flags |= flagEndsWith
	}
	x.text = s[:n]
	return x
}

// matchBasename is git's match_basename, for patterns without a '/'.
func matchBasename(basename string, x *pattern) bool {
	switch {
	case x.noWild == len(x.text):
		return basename == x.text
	case x.flags&flagEndsWith != 0:
		return strings.HasSuffix(basename, x.text[1:])
	}
	return wildmatch(x.text, basename, 0)
}

// matchPathname is git's match_pathname: the pattern, relative to base (the
// list's directory without its trailing '/'), against the whole path with
// WM_PATHNAME. Like git it compares the literal prefix first and hands only
// the rest to wildmatch, so a "**" right after that prefix counts as being
// at the start of the pattern.
func matchPathname(path, base string, x *pattern) bool {
	pat, prefix := x.text, x.noWild
	if pat[0] == '/' {
		pat = pat[1:]
		prefix--
	}
	if len(path) < len(base)+1 || (base != "" && path[len(base)] != '/') || path[:len(base)] != base {
		return false
	}
	name := path
	if base != "" {
		name = path[len(base)+1:]
	}
	if prefix > 0 {
		if prefix > len(name) || pat[:prefix] != name[:prefix] {
			return false
		}
		pat, name = pat[prefix:], name[prefix:]
		if pat == "" && name == "" {
			return true
		}
	}
	return wildmatch(pat, name, wmPathname)
}

// lastMatching is git's last_matching_pattern_from_list: the last pattern of
// l matching path (relative to the top; basename its last component), or nil.
func (l *List) lastMatching(path, basename string, isDir bool) *pattern {
	for i := len(l.patterns) - 1; i >= 0; i-- {
		x := &l.patterns[i]
		if x.flags&flagMustBeDir != 0 && !isDir {
			continue
		}
		if x.flags&flagNoDir != 0 {
			if matchBasename(basename, x) {
				return x
			}
			continue
		}
		if matchPathname(path, l.dir, x) {
			return x
		}
	}
	return nil
}

// Stack is git's exclude state for one directory (dir.c's prep_exclude): the
// per-directory lists from the top down to it, the global lists, and whether
// the directory or an ancestor is excluded. A Stack is never changed after it
// is made, so siblings can share their parent's.
type Stack struct {
	path     string
	dirs     []*List // per-directory lists, top first
	global   []*List // in the order git checks them
	excluded bool
}

// Root is the worktree top with the global lists in the order git checks
// them: info/exclude first, then core.excludesFile (per-directory lists,
// deepest first, come before both). Nil lists are skipped. Push the top's
// own .gitignore with Top.
func Root(global ...*List) *Stack {
	s := &Stack{}
	for _, l := range global {
		if l != nil {
			s.global = append(s.global, l)
		}
	}
	return s
}

// Top returns the root with the top directory's .gitignore (nil when it has
// none) pushed. Call it once, on the Stack from Root: the top directory is
// never itself excluded, so unlike Child it checks nothing.
func (s *Stack) Top(gitignore []byte) *Stack {
	return s.push("", gitignore)
}

// push returns a Stack for the directory path with gitignore's patterns
// added after s's.
func (s *Stack) push(path string, gitignore []byte) *Stack {
	c := &Stack{path: path, dirs: s.dirs, global: s.global}
	if l := Parse(gitignore, path); len(l.patterns) > 0 || l.unsupported {
		c.dirs = append(s.dirs[:len(s.dirs):len(s.dirs)], l)
	}
	return c
}

// Child enters the subdirectory name of s. gitignore is the content of that
// subdirectory's .gitignore, or nil when it has none. When the subdirectory
// is excluded by the rules of s (or s is inside an excluded directory),
// everything below it is excluded and its .gitignore is not read, as git's
// prep_exclude stops there.
func (s *Stack) Child(name string, gitignore []byte) *Stack {
	if s.Excluded(name, true) {
		return &Stack{path: s.path + name + "/", dirs: s.dirs, global: s.global, excluded: true}
	}
	return s.push(s.path+name+"/", gitignore)
}

// Excluded reports whether the entry name directly inside s's directory is
// ignored. isDir: the entry is a directory (a symlink to one is not, as for
// git's DT_LNK). The last matching pattern of a list decides, lists taken in
// git's order; a negative match means not excluded, but nothing re-includes
// an entry of an excluded directory.
func (s *Stack) Excluded(name string, isDir bool) bool {
	if s.excluded {
		return true
	}
	path := s.path + name
	for i := len(s.dirs) - 1; i >= 0; i-- {
		if x := s.dirs[i].lastMatching(path, name, isDir); x != nil {
			return x.flags&flagNegative == 0
		}
	}
	for _, l := range s.global {
		if x := l.lastMatching(path, name, isDir); x != nil {
			return x.flags&flagNegative == 0
		}
	}
	return false
}

// DirExcluded reports whether s's directory or one of its ancestors is
// excluded.
func (s *Stack) DirExcluded() bool { return s.excluded }

// Path is s's directory relative to the top: "" or ending in '/'.
func (s *Stack) Path() string { return s.path }

// Unsupported reports whether a list on the stack is Unsupported.
func (s *Stack) Unsupported() bool {
	for _, l := range append(s.dirs[:len(s.dirs):len(s.dirs)], s.global...) {
		if l.Unsupported() {
			return true
		}
	}
	return false
}
