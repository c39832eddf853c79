package harness

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/statefile"
)

// A repository is content other people shape (a clone, a tarball, an
// agent's edits), so hook install reads and writes a harness's settings
// only beneath one folder, through os.Root: every step of every path is
// opened relative to the folder before it, and a link that leads out of
// the root fails the call instead of carrying a write elsewhere.

// place is where one settings file lives: name, slash-separated, beneath
// root. root itself is opened following links: it is the repository's top
// level, or the user scope's folder (~/.claude, $CODEX_HOME), both the
// user's own choice.
type place struct {
	root string
	name string
}

func (p place) path() string { return filepath.Join(p.root, filepath.FromSlash(p.name)) }

// ReadSettings reads the settings file name (slash-separated) beneath root
// as install does, for a harness's doctor checks (kind.Doctor): nil when
// there is none.
func ReadSettings(root, name string) ([]byte, error) {
	data, _, _, err := place{root: root, name: name}.read()
	return data, err
}

// maxSettingsBytes bounds what install reads: a settings file is a few
// kilobytes, and a huge file planted in its place must not eat memory.
const maxSettingsBytes = 16 << 20

// read returns the file's bytes and mode, or existed=false. Only a regular
// file is read, opened with O_NONBLOCK so that a FIFO planted there is
// refused instead of hanging install.
func (p place) read() (data []byte, existed bool, mode os.FileMode, err error) {
	r, err := os.OpenRoot(p.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0o644, nil // a user scope's folder not made yet
	}
	if err != nil {
		return nil, false, 0, p.failed("read", err)
	}
	defer r.Close()
	if err := p.checkLinks(r); err != nil {
		return nil, false, 0, err
	}
	f, err := r.OpenFile(p.name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0o644, nil
	}
	if err != nil {
		return nil, false, 0, p.failed("read", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, 0, p.failed("read", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, 0, p.refused(p.name, "it is not a regular file")
	}
	// O_NONBLOCK means nothing to a regular file: the read below is whole.
	data, err = io.ReadAll(io.LimitReader(f, maxSettingsBytes+1))
	if err != nil {
		return nil, false, 0, p.failed("read", err)
	}
	if len(data) > maxSettingsBytes {
		return nil, false, 0, p.refused(p.name, "it is larger than 16 MiB, which no settings file is")
	}
	return data, true, fi.Mode().Perm(), nil
}

// write replaces the file with data: a temporary file beside it, created
// exclusively under an unpredictable name, then renamed over it, so the
// harness never reads half a settings file and no planted name is
// written through.
func (p place) write(data []byte, mode os.FileMode) error {
	if mode == 0 {
		mode = 0o644
	}
	// The root is the repository's top, which exists, or the user scope's
	// folder, the user's own, made here the first time.
	if err := os.MkdirAll(p.root, 0o755); err != nil {
		return p.failed("write", err)
	}
	r, err := os.OpenRoot(p.root)
	if err != nil {
		return p.failed("write", err)
	}
	defer r.Close()
	if err := p.checkLinks(r); err != nil {
		return err
	}
	dir := path.Dir(p.name)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return p.failed("write", err)
	}
	tmp, f, err := createTemp(r, path.Join(dir, "."+path.Base(p.name)+".venom-"))
	if err != nil {
		return p.failed("write", err)
	}
	defer r.Remove(tmp) // a no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Rename(tmp, p.name)
	}
	if err != nil {
		return p.failed("write", err)
	}
	return nil
}

// createTemp is os.CreateTemp beneath a root: O_CREATE|O_EXCL (which
// os.Root never lets follow a link) under a random name.
func createTemp(r *os.Root, prefix string) (string, *os.File, error) {
	for try := 0; ; try++ {
		name, err := statefile.RandomName(prefix + "*")
		if err != nil {
			return "", nil, err
		}
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return name, f, err
	}
}

// remove deletes the file install had created, and its folder when that
// is left empty.
func (p place) remove() error {
	r, err := os.OpenRoot(p.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return p.failed("remove", err)
	}
	defer r.Close()
	if err := p.checkLinks(r); err != nil {
		return err
	}
	if err := r.Remove(p.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return p.failed("remove", err)
	}
	// rmdir, never unlink: a folder swapped for a link meanwhile stays.
	// Each folder of the name that is left empty goes (.opencode/plugins,
	// then .opencode), up to the root.
	if path.Dir(p.name) == "." {
		_ = unix.Rmdir(p.root) // the user scope's folder, only when empty
		return nil
	}
	for dir := path.Dir(p.name); dir != "."; dir = path.Dir(dir) {
		parent, err := r.Open(path.Dir(dir))
		if err != nil {
			return nil
		}
		err = unix.Unlinkat(int(parent.Fd()), path.Base(dir), unix.AT_REMOVEDIR)
		parent.Close()
		if err != nil {
			return nil
		}
	}
	return nil
}

// checkLinks names the link a refused path goes through, before anything
// is read or written (os.Root would refuse it too, but only as "path
// escapes from parent", and at any later step). Refused: a link to a
// folder that leads out of the root, or is absolute (os.Root follows
// none), or into a .git folder, or nowhere, and any link at the settings
// file itself. A relative link to a
// folder that stays beneath the root is followed: the file it leads to is
// one the repository's owner could have put there, under the same fixed
// name, and os.Root holds every later step beneath the root even if the
// link is swapped meanwhile. The file itself must not be a link, inside or
// out: the rename that writes it would replace the link rather than write
// where it points.
func (p place) checkLinks(r *os.Root) error {
	parts := strings.Split(p.name, "/")
	for i := range parts {
		rel := strings.Join(parts[:i+1], "/")
		fi, err := r.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing further exists: install makes it as a folder
		}
		if err != nil {
			return p.failed("read", err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, _ := r.Readlink(rel)
		if i == len(parts)-1 {
			return p.refused(rel, "it is a symbolic link (to "+target+")")
		}
		if _, err := r.Stat(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p.refused(rel, "it is a symbolic link to "+target+", which leads out of "+p.root)
		}
		switch to := p.linkEnd(rel); {
		case to == "":
			return p.refused(rel, "it is a symbolic link to "+target+", which leads nowhere")
		case inGitDir(to):
			return p.refused(rel, "it is a symbolic link to "+target+", which leads into .git")
		}
	}
	return nil
}

// linkEnd is where the link at rel leads, followed to its end, relative
// to the root; "" when it leads nowhere (a dangling link, which a later
// mkdir could follow to make its target).
func (p place) linkEnd(rel string) string {
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		return ""
	}
	to, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return ""
	}
	inside, err := filepath.Rel(root, to)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(inside)
}

// inGitDir: a path beneath the root lies in a .git folder (a committed
// ".claude -> .git/hooks"). git's own folder is never the place of a
// settings file, and a clone must not steer a write there; os.Root alone
// allows it, the folder being beneath the top.
func inGitDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}

// refused is failed.state naming the file or link that hook install will
// not go through (rel is beneath the root); nothing was read or written.
func (p place) refused(rel, why string) *errcode.Error {
	at := filepath.Join(p.root, filepath.FromSlash(rel))
	return errcode.Newf(errcode.FailedState, map[string]string{"file": p.path(), "refused": at},
		"refused %s: %s", at, why).
		Hint("hook install writes only inside %s; make it a plain folder or file there, or edit the settings by hand", p.root)
}

func (p place) failed(op string, err error) *errcode.Error {
	why := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err.Error() // the path is in the message already
	}
	return errcode.Newf(errcode.FailedState, map[string]string{"file": p.path()}, "cannot %s %s: %s", op, p.path(), why).
		Wrap(err)
}
