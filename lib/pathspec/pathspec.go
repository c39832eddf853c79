// Package pathspec turns the paths a person or a harness gives into
// repository paths, as git's pathspecs do (gitglossary(7)): relative to the
// current folder, ".." while in the tree, absolute paths inside it, ":/",
// and the "literal", "glob" and "exclude" magic. Every path a command or a
// harness gives goes through here, so one rule decides what a path means.
// Matching is git's match_pathspec_item (dir.c) and wildmatch; a
// pattern's literal part passes treepath.Verify.
package pathspec

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/treepath"
)

// Item is one pathspec, resolved against the tree's top.
type Item struct {
	// Pattern is repository-relative and normalized; "" matches every
	// path, and a trailing "/" names a folder.
	Pattern string
	Literal bool // ":(literal)": no wildcards
	Glob    bool // ":(glob)": wildcards stop at "/", "**" spans folders
	Exclude bool // ":(exclude)", ":!", ":^"
}

// Set is the pathspecs of one command. The zero Set matches everything.
type Set struct {
	Items []Item
}

// Error is a pathspec git would refuse, or one outside the tree.
type Error struct {
	Arg    string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Arg, e.Reason) }

// Parse resolves each argument against cwd (any folder of the tree whose
// top is top; both may be reached through links).
func Parse(top, cwd string, args []string) (Set, error) {
	var s Set
	for _, a := range args {
		it, err := parseOne(top, cwd, a)
		if err != nil {
			return Set{}, err
		}
		s.Items = append(s.Items, it)
	}
	return s, nil
}

// ParseStored reads the forms Strings returns, which name their paths from
// the top (a plan's or a log record's pathspecs).
func ParseStored(stored []string) (Set, error) {
	return Parse("/", "/", stored)
}

// Resolve makes one plain path (no magic, no wildcards) repository-
// relative: a harness's file path, absolute or relative to cwd. It returns
// "" for the top itself.
func Resolve(top, cwd, p string) (string, error) {
	prefix, rest, err := start(top, cwd, p)
	if err != nil {
		return "", err
	}
	rel, ok := normalize(prefix, rest)
	if !ok {
		return "", &Error{p, "outside the repository"}
	}
	rel = strings.TrimSuffix(rel, "/")
	if rel != "" {
		if err := treepath.Verify(rel); err != nil {
			return "", &Error{p, err.Error()}
		}
	}
	return rel, nil
}

func parseOne(top, cwd, arg string) (Item, error) {
	if arg == "" {
		return Item{}, &Error{arg, "an empty path matches nothing; use . for the current folder"}
	}
	raw := arg
	var it Item
	topMagic := false
	if rest, ok := strings.CutPrefix(arg, "b64:"); ok {
		// docs/json.md#conventions: the exact bytes of a path as JSON shows it,
		// from the top; or a stored pathspec that is not valid UTF-8.
		b, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return Item{}, &Error{raw, "not valid base64 after b64:"}
		}
		arg = string(b)
		if !strings.HasPrefix(arg, ":(") {
			arg = ":(top,literal)" + arg
		}
	}
	if strings.HasPrefix(arg, ":") {
		var err error
		if arg, topMagic, err = it.magic(arg); err != nil {
			return Item{}, &Error{raw, err.Error()}
		}
	}
	if it.Literal && it.Glob {
		return Item{}, &Error{raw, "the literal and glob magic cannot go together"}
	}
	prefix := ""
	if !topMagic {
		var err error
		if prefix, arg, err = start(top, cwd, arg); err != nil {
			return Item{}, &Error{raw, err.(*Error).Reason}
		}
	}
	pat, ok := normalize(prefix, arg)
	if !ok {
		return Item{}, &Error{raw, "outside the repository"}
	}
	if lit := strings.TrimSuffix(pat, "/"); lit != "" {
		if err := treepath.Verify(lit); err != nil {
			return Item{}, &Error{raw, "not a path git would check out (" + err.Error() + ")"}
		}
	}
	it.Pattern = pat
	return it, nil
}

// magic reads ":(word,...)rest" or the short form ":/!^...:rest" into it,
// and returns the rest and whether it is from the top.
func (it *Item) magic(arg string) (string, bool, error) {
	top := false
	if rest, ok := strings.CutPrefix(arg, ":("); ok {
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return "", false, fmt.Errorf("missing ) at the end of the magic")
		}
		for _, w := range strings.Split(rest[:end], ",") {
			switch strings.TrimSpace(w) {
			case "top":
				top = true
			case "literal":
				it.Literal = true
			case "glob":
				it.Glob = true
			case "exclude":
				it.Exclude = true
			case "":
			default:
				return "", false, fmt.Errorf("magic %q is not supported (top, literal, glob, exclude are)", w)
			}
		}
		return rest[end+1:], top, nil
	}
	rest := arg[1:]
	for len(rest) > 0 {
		c := rest[0]
		if c == ':' {
			rest = rest[1:]
			break
		}
		switch c {
		case '/':
			top = true
		case '!', '^':
			it.Exclude = true
		default:
			return rest, top, nil
		}
		rest = rest[1:]
	}
	return rest, top, nil
}

// start splits p into the folder it starts from, repository-relative
// with a trailing "/" ("" at the top), and the rest: cwd's folder for a
// relative path; for an absolute one, the top, and p made relative to it.
func start(top, cwd, p string) (string, string, error) {
	if filepath.IsAbs(p) {
		rel, ok := inside(top, p)
		if !ok {
			return "", "", &Error{p, "outside the repository"}
		}
		if strings.HasSuffix(p, "/") && rel != "" {
			rel += "/"
		}
		return "", rel, nil
	}
	rel, ok := inside(top, cwd)
	if !ok {
		return "", "", &Error{p, "the current folder is outside the repository"}
	}
	if rel == "" {
		return "", p, nil
	}
	return rel + "/", p, nil
}

// inside makes an absolute path relative to top, "" for top itself. The
// caller may name the tree through a link (a harness's cwd, a folder
// reached through one): the longest part of the path that exists is
// resolved, the rest kept as written.
func inside(top, p string) (string, bool) {
	p = filepath.Clean(p)
	if canon, err := filepath.EvalSymlinks(top); err == nil {
		top = canon
	}
	if rel, ok := under(top, p); ok {
		return rel, true
	}
	head, tail := p, ""
	for {
		if real, err := filepath.EvalSymlinks(head); err == nil {
			return under(top, filepath.Join(real, tail))
		}
		parent := filepath.Dir(head)
		if parent == head {
			return "", false
		}
		tail = filepath.Join(filepath.Base(head), tail)
		head = parent
	}
}

func under(top, p string) (string, bool) {
	rel, err := filepath.Rel(top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

// normalize joins prefix and p as git's normalize_path_copy does: "."
// and empty components go, ".." takes one back (never above the top), and
// a trailing "/" (or "/.", "/..") says the result is a folder.
func normalize(prefix, p string) (string, bool) {
	parts := strings.Split(prefix+p, "/")
	var out []string
	dir := false
	for i, c := range parts {
		last := i == len(parts)-1
		switch c {
		case "", ".":
			dir = dir || last
		case "..":
			if len(out) == 0 {
				return "", false
			}
			out = out[:len(out)-1]
			dir = dir || last
		default:
			out = append(out, c)
		}
	}
	res := strings.Join(out, "/")
	if dir && res != "" {
		res += "/"
	}
	return res, true
}

// Empty reports a set that names no path: everything matches.
func (s Set) Empty() bool { return len(s.Items) == 0 }

// Match reports whether a repository path (a file's, as a tree lists it)
// is chosen: it matches an item that excludes nothing (any path, when
// there is none) and no exclude item.
func (s Set) Match(path string) bool {
	included, includes := false, false
	for _, it := range s.Items {
		if it.Exclude {
			continue
		}
		includes = true
		if it.match(path) {
			included = true
			break
		}
	}
	if includes && !included {
		return false
	}
	for _, it := range s.Items {
		if it.Exclude && it.match(path) {
			return false
		}
	}
	return true
}

// match is git's match_pathspec_item for a file's path.
func (it Item) match(name string) bool {
	m := it.Pattern
	if m == "" {
		return true
	}
	if len(m) <= len(name) && name[:len(m)] == m {
		if len(m) == len(name) || m[len(m)-1] == '/' || name[len(m)] == '/' {
			return true
		}
	}
	if it.Literal || !strings.ContainsAny(m, "*?[\\") {
		return false
	}
	return ignore.Wildmatch(m, name, it.Glob)
}

// Canonical returns the set with each folder item ("d/", as "." gives in
// folder d, or "d/" from the top) written without its "/" where that
// changes nothing: the item matches what "d" matches unless a file (not a
// folder) is at d, which isFile tells. Then "-- ." run in d and "-- d" run
// at the top are one set, and Strings (a plan id's paths) the same; an
// item with wildcards keeps its form, as "/" means more there.
func (s Set) Canonical(isFile func(path string) bool) Set {
	out := Set{Items: make([]Item, 0, len(s.Items))}
	for _, it := range s.Items {
		if dir, ok := strings.CutSuffix(it.Pattern, "/"); ok && dir != "" &&
			(it.Literal || !strings.ContainsAny(dir, "*?[\\")) && !isFile(dir) {
			it.Pattern = dir
		}
		out.Items = append(out.Items, it)
	}
	return out
}

// Strings returns each item as a git pathspec from the top
// (":(top,glob)src/**"), sorted, each once: what a plan id and a log
// record hold, what ParseStored reads, and what git takes after "--". A
// pattern that is not valid UTF-8 is written b64:<base64>, as JSON could
// not carry it.
func (s Set) Strings() []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range s.Items {
		g := it.git()
		if !utf8.ValidString(g) {
			g = "b64:" + base64.StdEncoding.EncodeToString([]byte(g))
		}
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// Git returns the items as git's own pathspecs, for git diff-tree's
// arguments after "--".
func (s Set) Git() []string {
	out := make([]string, 0, len(s.Items))
	for _, it := range s.Items {
		out = append(out, it.git())
	}
	return out
}

func (it Item) git() string {
	words := []string{"top"}
	if it.Literal {
		words = append(words, "literal")
	}
	if it.Glob {
		words = append(words, "glob")
	}
	if it.Exclude {
		words = append(words, "exclude")
	}
	return ":(" + strings.Join(words, ",") + ")" + it.Pattern
}

// Args returns the items as arguments that mean the same from any folder
// of the tree, for a command a person is told to run: ":/src/a.go", or
// the long form for other magic.
func (s Set) Args() []string {
	var out []string
	for _, it := range s.Items {
		switch {
		case it.Literal || it.Glob || it.Exclude:
			out = append(out, it.git())
		case it.Pattern == "" || !strings.ContainsAny(it.Pattern[:1], "/!^:"):
			out = append(out, ":/"+it.Pattern)
		default:
			out = append(out, ":/:"+it.Pattern)
		}
	}
	return out
}

// Shown returns the items as a person reads them: paths from the top, a
// folder with its "/", the whole tree as ":/", other magic in front.
func (s Set) Shown() []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range s.Items {
		p := it.Pattern
		if p == "" {
			p = ":/"
		}
		var words []string
		if it.Glob {
			words = append(words, "glob")
		}
		if it.Exclude {
			words = append(words, "exclude")
		}
		if len(words) > 0 {
			p = ":(" + strings.Join(words, ",") + ")" + it.Pattern
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
