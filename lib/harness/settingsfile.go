package harness

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/statefile"
)

// A repository is content other people shape (a clone, a tarball, an
// agent's edits), so hook install reads and writes a harness's settings
// only beneath one folder: every folder on the way is opened with
// statefile.OpenDir, following no link, once resolve has vetted the links
// the name goes through (docs/harness.md#install-beneath-the-top).

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

// openRoot opens the root, following links (ENOENT: a user scope's
// folder not made yet); the caller closes it.
func (p place) openRoot() (int, error) {
	fd, err := unix.Open(p.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: p.root, Err: err}
	}
	return fd, nil
}

// folder opens the folder real names beneath root, link-free, making the
// missing ones when mkdir is set.
func folder(root int, real string, mkdir bool) (int, error) {
	var mk statefile.Mkdir
	if mkdir {
		mk = statefile.MkdirMode(0o755, unix.O_PATH)
	}
	return statefile.OpenDir(root, real, unix.O_PATH, mk)
}

// read returns the file's bytes and mode, or existed=false. Only a regular
// file is read, opened with O_NONBLOCK so that a FIFO planted there is
// refused instead of hanging install.
func (p place) read() (data []byte, existed bool, mode os.FileMode, err error) {
	root, err := p.openRoot()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0o644, nil // a user scope's folder not made yet
	}
	if err != nil {
		return nil, false, 0, p.failed("read", err)
	}
	defer unix.Close(root)
	real, err := p.resolve(root)
	if err != nil {
		return nil, false, 0, err
	}
	at := real[len(real)-1]
	dir, err := folder(root, path.Dir(at), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0o644, nil
	}
	if err != nil {
		return nil, false, 0, p.failed("read", err)
	}
	fd, err := unix.Openat(dir, path.Base(at), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(dir)
	if err == unix.ENOENT {
		return nil, false, 0o644, nil
	}
	if err != nil {
		return nil, false, 0, p.failed("read", &fs.PathError{Op: "open", Path: p.path(), Err: err})
	}
	f := os.NewFile(uintptr(fd), p.path())
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
	root, err := p.openRoot()
	if err != nil {
		return p.failed("write", err)
	}
	defer unix.Close(root)
	real, err := p.resolve(root)
	if err != nil {
		return err
	}
	at := real[len(real)-1]
	dir, err := folder(root, path.Dir(at), true)
	if err != nil {
		return p.failed("write", err)
	}
	defer unix.Close(dir)
	name := path.Base(at)
	tmp, f, err := createTemp(dir, "."+name+".venom-*")
	if err != nil {
		return p.failed("write", err)
	}
	defer unix.Unlinkat(dir, tmp, 0) // a no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = unix.Renameat(dir, tmp, dir, name); err != nil {
			err = &os.LinkError{Op: "rename", Old: tmp, New: p.path(), Err: err}
		}
	}
	if err != nil {
		return p.failed("write", err)
	}
	return nil
}

// createTemp is os.CreateTemp in the folder open at dir: O_CREAT|O_EXCL
// (which never follows a link) under a random name.
func createTemp(dir int, pattern string) (string, *os.File, error) {
	for try := 0; ; try++ {
		name, err := statefile.RandomName(pattern)
		if err != nil {
			return "", nil, err
		}
		fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST && try < 100 {
			continue
		}
		if err != nil {
			return "", nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return name, os.NewFile(uintptr(fd), name), nil
	}
}

// remove deletes the file install had created, and its folder when that
// is left empty.
func (p place) remove() error {
	root, err := p.openRoot()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return p.failed("remove", err)
	}
	defer unix.Close(root)
	real, err := p.resolve(root)
	if err != nil {
		return err
	}
	at := real[len(real)-1]
	if dir, err := folder(root, path.Dir(at), false); err == nil {
		err = unix.Unlinkat(dir, path.Base(at), 0)
		if err == unix.EISDIR {
			err = unix.Unlinkat(dir, path.Base(at), unix.AT_REMOVEDIR)
		}
		unix.Close(dir)
		if err != nil && err != unix.ENOENT {
			return p.failed("remove", &fs.PathError{Op: "remove", Path: p.path(), Err: err})
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return p.failed("remove", err)
	}
	// rmdir, never unlink: a folder swapped for a link meanwhile stays.
	// Each folder of the name that is left empty goes (.opencode/plugins,
	// then .opencode), up to the root; a link on the way stays too.
	if len(real) == 1 {
		_ = unix.Rmdir(p.root) // the user scope's folder, only when empty
		return nil
	}
	parts := strings.Split(p.name, "/")
	for i := len(parts) - 2; i >= 0; i-- {
		parent := "."
		if i > 0 {
			parent = real[i-1]
		}
		dir, err := folder(root, parent, false)
		if err != nil {
			return nil
		}
		err = unix.Unlinkat(dir, parts[i], unix.AT_REMOVEDIR)
		unix.Close(dir)
		if err != nil {
			return nil
		}
	}
	return nil
}

// resolve vets the links the name goes through (docs/harness.md#install-beneath-the-top)
// and returns, for each of its names, the link-free path beneath the root
// it stands for. A link at the file itself is refused (the rename would
// replace it), and one to a folder unless followBeneath keeps it beneath
// the root, out of .git.
func (p place) resolve(root int) ([]string, error) {
	parts := strings.Split(p.name, "/")
	real := make([]string, len(parts))
	at, missing := "", false
	for i, part := range parts {
		at = path.Join(at, part)
		real[i] = at
		if missing {
			continue // nothing further exists: install makes it as a folder
		}
		rel := strings.Join(parts[:i+1], "/")
		var st unix.Stat_t
		if err := unix.Fstatat(root, at, &st, unix.AT_SYMLINK_NOFOLLOW); err == unix.ENOENT {
			missing = true
			continue
		} else if err != nil {
			return nil, p.failed("read", &fs.PathError{Op: "lstat", Path: rel, Err: err})
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			continue
		}
		target, _ := statefile.Readlinkat(root, at)
		if i == len(parts)-1 {
			return nil, p.refused(rel, "it is a symbolic link (to "+target+")")
		}
		to, err := followBeneath(root, at)
		switch {
		case err == unix.ENOENT:
			return nil, p.refused(rel, "it is a symbolic link to "+target+", which leads nowhere")
		case err != nil:
			return nil, p.refused(rel, "it is a symbolic link to "+target+", which leads out of "+p.root)
		case inGitDir(to):
			return nil, p.refused(rel, "it is a symbolic link to "+target+", which leads into .git")
		}
		at, real[i] = to, to
	}
	return real, nil
}

// errEscapes: a link leads out of the root (absolute, or by "..").
var errEscapes = errors.New("path escapes from parent")

// followBeneath is where the link at name leads, beneath the folder open
// at root, as os.Root resolves it: every link on the way followed, a ".."
// going up a name already resolved, and errEscapes for an absolute link or
// a ".." above the root; "." for the root itself.
func followBeneath(root int, name string) (string, error) {
	var done []string
	todo := strings.Split(name, "/")
	for links := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", errEscapes
			}
			done = done[:len(done)-1]
			continue
		}
		next := strings.Join(append(done, part), "/")
		var st unix.Stat_t
		if err := unix.Fstatat(root, next, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return "", err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			done = append(done, part)
			continue
		}
		if links++; links > 40 {
			return "", unix.ELOOP
		}
		target, err := statefile.Readlinkat(root, next)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			return "", errEscapes
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// inGitDir: a path beneath the root lies in a .git folder (a committed
// ".claude -> .git/hooks"). git's own folder is never the place of a
// settings file, and a clone must not steer a write there, though it is
// beneath the top.
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
