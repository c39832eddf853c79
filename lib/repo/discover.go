package repo

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitconfig"
)

// discover finds dir's repository without running git, in the plain case
// only (a .git folder, or a file naming a linked worktree's git dir, owned
// by us on one file system, a config with nothing unusual, no GIT_*
// variable that selects anything): a few stats for a git process. ok is
// false otherwise, and Open asks git, whose answer this one must equal
// (TestDiscover_AgreesWithGit).
func discover(dir string, environ []string) (p Paths, ok bool) {
	if !gitconfig.PlainEnvironment(environ) {
		return p, false
	}
	// safe.directory: git compares owners with SUDO_UID when root runs it.
	if os.Geteuid() == 0 && gitcli.Getenv(environ, "SUDO_UID") != "" {
		return p, false
	}
	// git walks up the physical path (getcwd), not a logical one.
	start, err := filepath.EvalSymlinks(dir)
	if err != nil || !filepath.IsAbs(start) {
		return p, false
	}
	dev, ok := deviceOf(start)
	if !ok {
		return p, false
	}
	for d := start; ; {
		l, err := Inspect(d)
		switch {
		case err != nil:
			// A link, something unreadable, or not plainly a
			// repository: git's to judge.
			return p, false
		case l.Kind == DotGitFolder:
			return plainRepository(d, l.GitDir)
		case l.Kind == GitFile:
			return linkedWorktree(d, l)
		}
		// A folder that is itself a git dir (a bare repository, or the
		// inside of .git) is git's to judge too.
		if _, err := os.Lstat(filepath.Join(d, "HEAD")); !errors.Is(err, fs.ErrNotExist) {
			return p, false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return p, false // no repository: git says why
		}
		if pd, ok := deviceOf(parent); !ok || pd != dev {
			// git stops at a file system boundary unless told not to.
			return p, false
		}
		d = parent
	}
}

// plainRepository checks the repository whose worktree is top and whose git
// dir is gitDir, as git's discovery would accept it unchanged.
func plainRepository(top, gitDir string) (p Paths, ok bool) {
	// A commondir file would make it a linked worktree's git dir.
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); !errors.Is(err, fs.ErrNotExist) {
		return p, false
	}
	// Inspect found gitDir a git dir (gitDirectory) already.
	if !ownedByUs(top, gitDir) || !plainConfig(filepath.Join(gitDir, "config")) {
		return p, false
	}
	return Paths{Top: top, GitDir: gitDir, CommonDir: gitDir, Index: filepath.Join(gitDir, "index")}, true
}

// linkedWorktree checks a worktree whose .git file names a linked
// worktree's git dir ("gitdir: <path>", as git worktree add writes it),
// which names the repository's common dir in its commondir file. A .git
// file without a commondir behind it (a submodule) is git's to judge.
func linkedWorktree(top string, l Layout) (p Paths, ok bool) {
	if !l.Linked {
		return p, false
	}
	gitDir, err := filepath.EvalSymlinks(l.GitDir)
	if err != nil {
		return p, false
	}
	common, err := filepath.EvalSymlinks(l.CommonDir)
	if err != nil {
		return p, false
	}
	dot := filepath.Join(top, ".git")
	if !gitDirectory(gitDir, common) || !gitDirectory(common, common) ||
		!ownedByUs(dot, top, gitDir, common) || !plainConfig(filepath.Join(common, "config")) {
		return p, false
	}
	return Paths{Top: top, GitDir: gitDir, CommonDir: common, Index: filepath.Join(gitDir, "index")}, true
}

// gitDirectory is git's is_git_directory, the one test of a git dir here
// (discovery, Inspect, an index's enclosing git dir): a HEAD git reads in
// gitDir, and objects and refs in its common dir.
func gitDirectory(gitDir, common string) bool {
	if fi, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil || !validHead(head) {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// ownedByUs is safe.directory's condition for git to go on without asking
// the config: every path owned by the current user. Anything else is
// git's to judge.
func ownedByUs(paths ...string) bool {
	uid := os.Geteuid()
	for _, path := range paths {
		if owner, ok := ownerOf(path); !ok || owner != uid {
			return false
		}
	}
	return true
}

// plainConfig reports whether the repository's config leaves discovery as
// it is: core.bare false or unset, no core.worktree, a format version of 0
// or 1, no extension (sha256 objects among them), no include.
func plainConfig(path string) bool {
	entries, err := gitconfig.ReadFile(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case e.Name == "core.bare":
			if b, known := e.Bool(); !known || b {
				return false
			}
		case e.Name == "core.worktree":
			return false
		case e.Name == "core.repositoryformatversion":
			if e.Value != "0" && e.Value != "1" {
				return false
			}
		case hasPrefix(e.Name, "extensions."), hasPrefix(e.Name, "include."), hasPrefix(e.Name, "includeif."):
			return false
		}
	}
	return true
}

// validHead is validate_headref: a symbolic ref into refs/, or an object id.
func validHead(b []byte) bool {
	if bytes.HasPrefix(b, []byte("ref:")) {
		rest := bytes.TrimLeft(b[4:], " \t")
		return bytes.HasPrefix(rest, []byte("refs/"))
	}
	if len(b) < 40 {
		return false
	}
	for _, c := range b[:40] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func deviceOf(path string) (uint64, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

func ownerOf(path string) (int, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
