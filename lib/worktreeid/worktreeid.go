// Package worktreeid holds a worktree's identity as git links it, so that
// an agent's tree is known to still be the worktree it registered in, not
// another one made later at the same path (docs/rollback.md#stale-trees).
// git's two links (the worktree's .git file and the admin folder's gitdir)
// do not tell a worktree removed and added again at the same path, so the
// identity adds the admin folder's inode and the mtime of its commondir
// file, which git writes only when it adds the worktree.
package worktreeid

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ID is a worktree's identity, recorded when an agent registers.
type ID struct {
	// GitDir is the worktree's git dir, symlinks resolved: the admin
	// folder of a linked worktree, the common dir of the main one.
	GitDir string `json:"git_dir"`
	// Made stamps a linked worktree's admin folder ("<inode>-<commondir's
	// mtime in ns>"); "" for the main worktree, which only goes with the
	// repository and the log itself.
	Made string `json:"made,omitempty"`
}

// Reasons a tree is not the worktree its agent registered in (Stale.Reason).
const (
	// Link: the registered path resolves elsewhere now (a symbolic link
	// was put in its place or above it).
	Link = "link"
	// GitDir: the worktree there has another git dir (another linked
	// worktree, or the main one).
	GitDir = "git_dir"
	// BackLink: the worktree's .git file and its admin folder's gitdir do
	// not name each other, as git worktree repair would find.
	BackLink = "back_link"
	// Replaced: the same admin folder name, made anew: the worktree was
	// removed and another added at the same path.
	Replaced = "replaced"
	// Moved: the worktree the command runs in is the agent's, moved
	// (git worktree move keeps the admin folder) from the path it
	// registered at.
	Moved = "moved"
	// Removed: the linked worktree is gone from its path (git worktree
	// remove, or rm -rf, which git worktree prune then tidies).
	Removed = "removed"
)

// Stale says why a tree is not the registered worktree.
type Stale struct {
	Reason string
	Detail string
}

func (s *Stale) Error() string { return s.Reason + ": " + s.Detail }

// Of is the identity of the worktree at top whose git dir is gitDir, in a
// repository whose common dir is commonDir (each as git resolved them,
// symlinks resolved). A linked worktree whose links do not name each
// other has none: a Stale with reason BackLink.
func Of(top, gitDir, commonDir string) (ID, *Stale) {
	if gitDir == commonDir {
		return ID{GitDir: gitDir}, nil
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); err != nil {
		// A git dir of its own that is not an admin folder (git init
		// --separate-git-dir): a main worktree.
		return ID{GitDir: gitDir}, nil
	}
	dotgit := filepath.Join(top, ".git")
	named, err := gitfile(dotgit)
	if err != nil {
		return ID{}, &Stale{BackLink, err.Error()}
	}
	if resolve(named, top) != gitDir {
		return ID{}, &Stale{BackLink, fmt.Sprintf("%s names %s, not %s", dotgit, named, gitDir)}
	}
	// The admin folder's gitdir: the .git file's path, absolute or (git
	// 2.48's --relative-paths) relative to the admin folder.
	b, err := os.ReadFile(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return ID{}, &Stale{BackLink, fmt.Sprintf("%s/gitdir is unreadable, as git worktree prune would find", gitDir)}
	}
	back := strings.TrimSpace(string(b))
	if back == "" || resolve(back, gitDir) != resolve(dotgit, "") {
		return ID{}, &Stale{BackLink, fmt.Sprintf("%s/gitdir names %q, not %s", gitDir, back, dotgit)}
	}
	made, err := stamp(gitDir)
	if err != nil {
		return ID{}, &Stale{BackLink, err.Error()}
	}
	return ID{GitDir: gitDir, Made: made}, nil
}

// Check reports whether the worktree at top, with gitDir and commonDir,
// is still the one registered at registered with identity want; want nil
// (a registration older than identities) checks the path and the links
// only.
func Check(registered, top, gitDir, commonDir string, want *ID) *Stale {
	if now := canonical(registered); now != registered || top != registered {
		return &Stale{Link, fmt.Sprintf("%s now leads to %s", registered, now)}
	}
	id, stale := Of(top, gitDir, commonDir)
	switch {
	case stale != nil:
		return stale
	case want == nil:
		return nil
	case id.GitDir != want.GitDir:
		return &Stale{GitDir, fmt.Sprintf("its git dir is %s, not %s", id.GitDir, want.GitDir)}
	case id.Made != want.Made:
		return &Stale{Replaced, fmt.Sprintf("%s was made again since", id.GitDir)}
	}
	return nil
}

// MovedTo is where the linked worktree of identity id is now, when its
// admin folder is still the one made for it and its gitdir file names a
// worktree that is there (git worktree move rewrites that file and keeps
// the folder); ok is false for a main worktree, or one removed or pruned.
func MovedTo(id *ID) (top string, ok bool) {
	if id == nil || id.Made == "" {
		return "", false
	}
	if made, err := stamp(id.GitDir); err != nil || made != id.Made {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(id.GitDir, "gitdir"))
	if err != nil {
		return "", false
	}
	back := strings.TrimSpace(string(b))
	if back == "" {
		return "", false
	}
	dotgit := resolve(back, id.GitDir)
	named, err := gitfile(dotgit)
	if err != nil || resolve(named, filepath.Dir(dotgit)) != id.GitDir {
		return "", false
	}
	return filepath.Dir(dotgit), true
}

// Listed reports whether git still lists the linked worktree of identity
// id, gone from its path: its admin folder is the one made for it, and
// git worktree list shows it "prunable" until git worktree prune removes
// the folder.
func Listed(id *ID) bool {
	if id == nil || id.Made == "" {
		return false
	}
	made, err := stamp(id.GitDir)
	return err == nil && made == id.Made
}

// gitfile reads a .git file's "gitdir: <path>" as git's
// read_gitfile_gently does; a folder, a link or anything else is an error.
func gitfile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a .git file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimRight(string(b), "\r\n")
	named, ok := strings.CutPrefix(s, "gitdir: ")
	if !ok || named == "" || strings.Contains(named, "\n") {
		return "", fmt.Errorf("%s is not a .git file", path)
	}
	return named, nil
}

// resolve makes p absolute (relative to base) with symlinks resolved.
func resolve(p, base string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return canonical(p)
}

func canonical(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// stamp is the admin folder's inode and its commondir file's modification
// time: a folder removed and made again has a new one.
func stamp(admin string) (string, error) {
	dir, err := os.Stat(admin)
	if err != nil {
		return "", err
	}
	cd, err := os.Stat(filepath.Join(admin, "commondir"))
	if err != nil {
		return "", err
	}
	st, ok := dir.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("cannot read the inode of %s", admin)
	}
	return fmt.Sprintf("%d-%d", st.Ino, cd.ModTime().UnixNano()), nil
}
