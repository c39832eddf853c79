package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/git-venom/git-venom/lib/statefile"
)

// Kind is what a folder's .git makes of it.
type Kind int

const (
	NoRepository Kind = iota // no .git in the folder
	DotGitFolder             // .git is a folder: the git dir itself
	GitFile                  // .git is a file naming the git dir (a linked worktree, an absorbed submodule)
)

// Layout is where a folder's repository keeps its git dir and common dir.
// Linked says the git dir has a commondir file (a linked worktree's git
// dir); CommonDir is then the folder it names, else the git dir itself.
type Layout struct {
	Kind      Kind
	GitDir    string
	CommonDir string
	Linked    bool
}

// ErrUnsure is a .git git may judge otherwise than a plain reading can: a
// link, a special file, an unreadable or malformed gitfile, or a git dir
// without HEAD, objects or refs.
var ErrUnsure = errors.New("a .git that is not plainly a repository")

// Inspect says whether dir holds a repository of its own, as git's
// is_nonbare_repository_dir does: a .git folder, or a .git file naming a
// git dir, whose HEAD, and objects and refs in its common dir, are there.
// No .git is NoRepository and no error. This is the one reading of .git
// files and commondir files: discovery, the capture's nested repositories
// and its quick scan all use it.
func Inspect(dir string) (Layout, error) {
	dot := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dot)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Layout{}, nil
	case err != nil:
		return Layout{}, fmt.Errorf("%w: %v", ErrUnsure, err)
	}
	l := Layout{Kind: DotGitFolder, GitDir: dot}
	switch {
	case fi.Mode().IsRegular():
		if l.GitDir, err = ReadGitFile(dot); err != nil {
			return Layout{}, err
		}
		l.Kind = GitFile
	case !fi.IsDir():
		return Layout{}, fmt.Errorf("%w: %s is a link or a special file", ErrUnsure, dot)
	}
	l.CommonDir, l.Linked = CommonDir(l.GitDir)
	if !gitDirectory(l.GitDir, l.CommonDir) {
		return Layout{}, fmt.Errorf("%w: %s is not a git dir that git reads plainly", ErrUnsure, l.GitDir)
	}
	return l, nil
}

// Holds says whether dir holds a .git of its own that git may take for a
// repository: Inspect finds one there, or cannot be sure there is none (a
// link, a special file, a gitfile it cannot read). What must leave nested
// repositories alone asks this, never a .git joined by hand.
func Holds(dir string) bool {
	l, err := Inspect(dir)
	return err != nil || l.Kind != NoRepository
}

// GitDirOf is the git dir dir's .git names: the target of a .git file,
// else dir/.git.
func GitDirOf(dir string) string {
	dot := filepath.Join(dir, ".git")
	if g, err := ReadGitFile(dot); err == nil {
		return g
	}
	return dot
}

// ReadGitFile reads a gitfile as git's read_gitfile_gently: "gitdir: " and
// a path, line ends trimmed; a relative path is relative to the file's
// folder. The path is joined with "/", not filepath.Join, which would take
// "link/.." away before the link is followed (the kernel, like git,
// follows it first). It is read as a regular file only, never through a
// link: a FIFO swapped in must not block a capture.
func ReadGitFile(path string) (string, error) {
	b, err := statefile.ReadRegular(path, true)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnsure, err)
	}
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	named := string(bytes.TrimRight(rest, "\r\n"))
	if !ok || named == "" || bytes.ContainsAny([]byte(named), "\x00\n") {
		return "", fmt.Errorf("%w: %s is not a gitfile", ErrUnsure, path)
	}
	if !filepath.IsAbs(named) {
		named = filepath.Dir(path) + "/" + named
	}
	return named, nil
}

// CommonDir is the common dir gitDir names in its commondir file (line
// ends trimmed, relative to gitDir), with linked true; without a usable
// commondir file it is gitDir itself.
func CommonDir(gitDir string) (common string, linked bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir, false
	}
	c := string(bytes.TrimRight(b, "\r\n"))
	if c == "" || bytes.ContainsAny([]byte(c), "\x00\n") {
		return gitDir, false
	}
	if !filepath.IsAbs(c) {
		c = gitDir + "/" + c
	}
	return c, true
}
