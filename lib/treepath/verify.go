// Package treepath owns the repository-relative paths of a work tree: which
// paths git would ever check out (Verify), and file operations that resolve
// such a path beneath the tree's top without following a link (Root).
//
// Every path a rollback acts on comes from a tree object, the log or a hook
// payload, all of which another party can shape; a path passes through here
// before any file operation.
package treepath

import (
	"fmt"
	"strings"
)

// Rule names the check a path failed.
type Rule string

// The rules of git's verify_path (read-cache.c, git 2.39), with
// core.protectNTFS and core.protectHFS both on whatever the platform: a
// path git itself would refuse to check out on any system.
const (
	RuleEmpty       Rule = "empty"           // the empty path
	RuleSlash       Rule = "slash"           // a leading, doubled or trailing slash (an empty component)
	RuleNUL         Rule = "nul"             // a NUL byte
	RuleDot         Rule = "dot"             // a "." component
	RuleDotDot      Rule = "dotdot"          // a ".." component
	RuleDotGit      Rule = "dotgit"          // a ".git" component, in any case
	RuleNTFSDotGit  Rule = "ntfs_dotgit"     // a name NTFS reads as .git: "git~1", ".git. ", ".git::$INDEX_ALLOCATION"
	RuleHFSDotGit   Rule = "hfs_dotgit"      // a name HFS+ reads as .git: ".g\u200cit"
	RuleGitmodules  Rule = "gitmodules_link" // .gitmodules (or an alias) as a symbolic link
	RuleNameHasPath Rule = "name_has_slash"  // a tree entry's name holds a slash (VerifyName)
	// RuleDuplicate is fsck's duplicateEntries, for those who read trees:
	// two entries of one name (a link and a folder "l"), of which git
	// would check out one or the other.
	RuleDuplicate Rule = "duplicate_entry"
	// RuleMode is fsck's badFilemode, for those who read trees: an
	// entry's mode is none git writes. A mode of 0 would read as "absent"
	// on both sides of a change, which a rollback takes for a deletion.
	RuleMode Rule = "mode"
)

// Error says which rule refused which path.
type Error struct {
	Path string
	Rule Rule
}

func (e *Error) Error() string {
	return fmt.Sprintf("unsafe path %q (%s)", e.Path, e.Rule)
}

// Git's modes that change the rules.
const (
	ModeRegular = 0o100644
	ModeSymlink = 0o120000
)

// ValidMode reports whether a tree entry's mode is one git writes: a
// file, an executable, a link, a folder or a submodule.
func ValidMode(mode uint32) bool {
	switch mode {
	case 0o100644, 0o100755, ModeSymlink, 0o040000, 0o160000:
		return true
	}
	return false
}

// Verify checks a path as git checks a regular file's (verify_path).
func Verify(p string) error { return VerifyMode(p, ModeRegular) }

// VerifyMode checks a path for an entry of the given git mode: a symbolic
// link may not be .gitmodules (git refuses it, as a link could make git
// read a file outside the tree as the submodules' config).
func VerifyMode(p string, mode uint32) error {
	if strings.IndexByte(p, 0) >= 0 {
		return &Error{p, RuleNUL}
	}
	if p == "" {
		return &Error{p, RuleEmpty}
	}
	link := mode&0o170000 == ModeSymlink
	for start := 0; ; {
		if r := component(p[start:], link); r != "" {
			return &Error{p, r}
		}
		end := strings.IndexByte(p[start:], '/')
		if end < 0 {
			return nil
		}
		start += end + 1
	}
}

// VerifyName checks one tree entry's name: one component (fsck's
// fullPathname), and the rules of VerifyMode.
func VerifyName(name string, mode uint32) error {
	if strings.IndexByte(name, '/') >= 0 {
		return &Error{name, RuleNameHasPath}
	}
	if !ValidMode(mode) {
		return &Error{name, RuleMode}
	}
	return VerifyMode(name, mode)
}

// component checks the component at the start of rest (rest runs to the
// path's end, as git's checks see it) and the backslash-separated names
// inside it, which NTFS reads as folders.
func component(rest string, link bool) Rule {
	switch {
	case rest == "" || rest[0] == '/':
		return RuleSlash
	case rest[0] == '.':
		if r := dotfile(rest[1:], link); r != "" {
			return r
		}
	}
	if isHFSDot(rest, "git") {
		return RuleHFSDotGit
	}
	if isNTFSDotGit(rest) {
		return RuleNTFSDotGit
	}
	if link && (isHFSDot(rest, "gitmodules") || isNTFSDotGitmodules(rest)) {
		return RuleGitmodules
	}
	// git checks after each backslash but the component's first character.
	for i := 1; i < len(rest) && rest[i] != '/'; i++ {
		if rest[i] != '\\' {
			continue
		}
		if isNTFSDotGit(rest[i+1:]) {
			return RuleNTFSDotGit
		}
		if link && isNTFSDotGitmodules(rest[i+1:]) {
			return RuleGitmodules
		}
	}
	return ""
}

// dotfile is git's verify_dotfile: rest follows a component's leading dot.
func dotfile(rest string, link bool) Rule {
	end := func(i int) bool { return i >= len(rest) || rest[i] == '/' }
	switch {
	case end(0):
		return RuleDot
	case rest[0] == '.' && end(1):
		return RuleDotDot
	case len(rest) >= 3 && strings.EqualFold(rest[:3], "git"):
		if end(3) {
			return RuleDotGit
		}
		if link && len(rest) >= 10 && strings.EqualFold(rest[3:10], "modules") && end(10) {
			return RuleGitmodules
		}
	}
	return ""
}
