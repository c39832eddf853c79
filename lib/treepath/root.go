package treepath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/statefile"
)

// ErrNotDir says a folder on the way to a path is not a folder of the
// tree: a file, or a link (never followed). The path is then not there, as
// far as the tree is concerned; errors.Is(err, ErrNotDir) finds it.
var ErrNotDir = errors.New("a parent is not a folder of the tree (a file or a link)")

// Root is a work tree's top, opened once: every operation resolves its
// path beneath it, folder by folder, and never follows a link, so a folder
// swapped for a link while a rollback runs cannot lead it outside the tree.
type Root struct {
	fd  int
	top string
	// release drops the entries writes replace (nil: at their unlink).
	release *Release
}

// Open opens the tree's top.
func Open(top string) (*Root, error) {
	fd, err := unix.Open(top, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: top, Err: err}
	}
	return &Root{fd: fd, top: top}, nil
}

// Close releases the top's descriptor.
func (r *Root) Close() error { return unix.Close(r.fd) }

// Lstat describes the entry at p itself, a link included.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	var st unix.Stat_t
	err := r.at("lstat", p, func(dir int, name string) error {
		return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	})
	if err != nil {
		return nil, err
	}
	return &fileInfo{name: path.Base(p), st: st}, nil
}

// Remove unlinks the file or link at p; a folder is refused (EISDIR).
func (r *Root) Remove(p string) error {
	return r.at("remove", p, func(dir int, name string) error { return unix.Unlinkat(dir, name, 0) })
}

// RemoveEmptyDir removes the folder at p if it is empty; a link there is
// refused (ENOTDIR), never followed.
func (r *Root) RemoveEmptyDir(p string) error {
	return r.at("rmdir", p, func(dir int, name string) error { return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR) })
}

// ErrStaged says an entry of a staging folder is missing or is not what
// the index said it is (a regular file for 100644 and 100755, a link for
// 120000), or a folder on the way to it is not a folder: nothing was moved.
var ErrStaged = errors.New("the staged entry is not what the index says")

// Rename moves the file or link at from (an absolute path outside the
// tree, on the same file system or not) to p, making p's missing folders
// beneath the top. A file or link at p is replaced, never written
// through; a folder at p is refused (EISDIR, ENOTEMPTY or EEXIST).
func (r *Root) Rename(from, p string) error {
	return r.in("rename", p, true, func(dir int, name string) error {
		err := unix.Renameat(unix.AT_FDCWD, from, dir, name)
		if errors.Is(err, unix.EXDEV) {
			var st unix.Stat_t
			if err := unix.Lstat(from, &st); err != nil {
				return err
			}
			return copyFrom(unix.AT_FDCWD, from, st.Mode&unix.S_IFMT == unix.S_IFLNK, dir, name)
		}
		return err
	})
}

// RenameFrom moves the entry rel of the folder open at stage (a staging
// folder the caller made and holds by descriptor) to p beneath the top, as
// Rename does. Nothing is resolved by name outside the two descriptors:
// rel's folders are opened beneath stage without following a link, and
// the entry must be a link when link is set, a regular file otherwise
// (ErrStaged); it is then renamed from its folder's descriptor, or, across
// file systems, opened from it with O_NOFOLLOW and copied.
func (r *Root) RenameFrom(stage int, rel, p string, link bool) error {
	_, err := r.RenameFromStat(stage, rel, p, link)
	return err
}

// Placed is what RenameFromStat saw of one entry: its stat data in the
// stage just before the rename, and at p just after it.
type Placed struct {
	Staged, Placed unix.Stat_t
	// Same: the entry at p is the staged one, unwritten since (the same
	// inode, size and modification time; a rename moves only the change
	// time). False after a copy across file systems or a write meanwhile.
	Same bool
}

// RenameFromStat is RenameFrom, and also returns the entry's stat data
// before and after, taken through the same descriptors.
func (r *Root) RenameFromStat(stage int, rel, p string, link bool) (Placed, error) {
	return r.RenameFromStatIn(nil, stage, rel, p, link)
}

// Held keeps the tree's folder of the last placement open for the next
// path in the same folder (RenameFromStatIn, LinkUnnamedIn): one lookup a
// folder, not one a file. A held descriptor never becomes a link; a folder
// renamed away meanwhile still gets its files (the capture then says
// exact: false), and one removed is resolved again. Close it after the run.
type Held struct {
	path string
	fd   int
	ok   bool
}

// Close releases the folder held, if any.
func (h *Held) Close() {
	if h != nil && h.ok {
		unix.Close(h.fd)
		h.ok = false
	}
}

// RenameFromStatIn is RenameFromStat, the folder of p held in h for the
// next path (nil: not held).
func (r *Root) RenameFromStatIn(h *Held, stage int, rel, p string, link bool) (Placed, error) {
	var placed Placed
	staged := func(err error) error {
		return &fs.PathError{Op: "rename", Path: rel, Err: fmt.Errorf("%w: %v", ErrStaged, err)}
	}
	if err := Verify(rel); err != nil {
		return placed, staged(err)
	}
	sdir, sname := stage, rel
	if parent, name := path.Split(rel); parent != "" {
		fd, err := openDirBeneath(stage, strings.TrimSuffix(parent, "/"), nil)
		if err != nil {
			return placed, staged(err)
		}
		defer unix.Close(fd)
		sdir, sname = fd, name
	}
	// The stage is private (0700, ours): the entry checked here is the
	// one renamed below.
	st := &placed.Staged
	if err := unix.Fstatat(sdir, sname, st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return placed, staged(err)
	}
	if typ := st.Mode & unix.S_IFMT; (link && typ != unix.S_IFLNK) || (!link && typ != unix.S_IFREG) {
		return placed, staged(fmt.Errorf("a %s", statefile.KindOf(st.Mode)))
	}
	err := r.inHeld("rename", p, true, h, func(dir int, name string) error {
		err := r.swapIn(sdir, sname, dir, name)
		if errors.Is(err, unix.EXDEV) {
			return copyFrom(sdir, sname, link, dir, name)
		}
		if err == nil {
			placed.Same = placed.look(dir, name)
		}
		return err
	})
	return placed, err
}

// swapIn puts the staged entry at name so that name holds the old entry or
// the new one at every moment, a kill included (git's checkout unlinks
// first, leaving the path empty for that moment). A file or link at name
// is swapped with the staged one (RENAME_EXCHANGE, which spares the flush
// ext4's auto_da_alloc starts on a rename over a file) and let go from
// the stage; a folder at name is EISDIR and stays. With nothing at name,
// or no swap on the file system, a plain rename, atomic too.
func (r *Root) swapIn(sdir int, sname string, dir int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return unix.Renameat(sdir, sname, dir, name)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.EISDIR
	}
	err := unix.Renameat2(sdir, sname, dir, name, unix.RENAME_EXCHANGE)
	switch {
	case errors.Is(err, unix.ENOENT):
		return unix.Renameat(sdir, sname, dir, name)
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return unix.Renameat(sdir, sname, dir, name)
	case err != nil:
		return err
	}
	// A folder made at name since the look is swapped back, whole.
	if unix.Fstatat(sdir, sname, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Renameat2(sdir, sname, dir, name, unix.RENAME_EXCHANGE); err != nil {
			return fmt.Errorf("%w: a folder made at the path is in the stage: %v", ErrStaged, err)
		}
		return unix.EISDIR
	}
	r.unlink(sdir, sname)()
	return nil
}

// look takes the stat data of name in dir into p.Placed and says whether
// it is still the entry p.Staged describes, unwritten since (a rename or
// a link moves only the change time).
func (p *Placed) look(dir int, name string) bool {
	at, st := &p.Placed, &p.Staged
	return unix.Fstatat(dir, name, at, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		at.Ino == st.Ino && at.Dev == st.Dev && at.Size == st.Size && at.Mtim == st.Mtim && at.Mode == st.Mode
}

// LinkUnnamedIn names p the unnamed regular file open at fd (made by
// Folder.CreateUnnamed in p's folder or above, and written), making p's
// missing folders, p's folder held in h (nil: not held): one rename and
// one stage name fewer than a staged file. A link never replaces: an entry
// at p is EEXIST for the caller to decide. Placed.Staged is fd's stat data.
func (r *Root) LinkUnnamedIn(h *Held, fd int, p string) (Placed, error) {
	var placed Placed
	st := &placed.Staged
	if err := unix.Fstat(fd, st); err != nil {
		return placed, &fs.PathError{Op: "link", Path: p, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return placed, &fs.PathError{Op: "link", Path: p, Err: fmt.Errorf("%w: a %s", ErrStaged, statefile.KindOf(st.Mode))}
	}
	err := r.inHeld("link", p, true, h, func(dir int, name string) error {
		if err := LinkUnnamed(fd, dir, name); err != nil {
			return err
		}
		placed.Same = placed.look(dir, name)
		return nil
	})
	return placed, err
}

// copyFrom is a rename across file systems, of the entry from in the
// folder fromDir (or a path, with unix.AT_FDCWD) to name in dir: the old
// entry at name is unlinked and the new one created exclusively, and the
// source is opened with O_NOFOLLOW and checked to be a regular file (or
// read as the link it is), so nothing is opened through a link.
func copyFrom(fromDir int, from string, link bool, dir int, name string) error {
	if link {
		target, err := statefile.Readlinkat(fromDir, from)
		if err != nil {
			return err
		}
		if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		if err := unix.Symlinkat(target, dir, name); err != nil {
			return err
		}
		return unix.Unlinkat(fromDir, from, 0)
	}
	ifd, err := unix.Openat(fromDir, from, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(ifd), from)
	defer in.Close()
	var st unix.Stat_t
	if err := unix.Fstat(ifd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w: a %s", ErrStaged, statefile.KindOf(st.Mode))
	}
	if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o777)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(fd), name)
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return unix.Unlinkat(fromDir, from, 0)
}

// at checks p, opens the folder holding it without following links and
// runs op on that folder and p's last name.
func (r *Root) at(op, p string, do func(dir int, name string) error) error {
	return r.in(op, p, false, do)
}

// in is at, making the missing folders first when mkdirs is set.
func (r *Root) in(op, p string, mkdirs bool, do func(dir int, name string) error) error {
	return r.inHeld(op, p, mkdirs, nil, do)
}

// inHeld is in, with p's folder taken from h when h holds it, and left
// held there for the next path (h nil: opened for p alone).
func (r *Root) inHeld(op, p string, mkdirs bool, h *Held, do func(dir int, name string) error) error {
	if err := Verify(p); err != nil {
		return &fs.PathError{Op: op, Path: p, Err: err}
	}
	parent, name := path.Split(p)
	dir := r.fd
	if parent != "" {
		parent = strings.TrimSuffix(parent, "/")
		if h != nil && h.ok && h.path == parent {
			err := do(h.fd, name)
			if !errors.Is(err, unix.ENOENT) {
				if err != nil {
					return &fs.PathError{Op: op, Path: p, Err: err}
				}
				return nil
			}
			// The folder may have been removed since it was opened:
			// resolved again below, as a path never held.
		}
		h.Close()
		var mkdir statefile.Mkdir
		if mkdirs {
			mkdir = statefile.MkdirMode(0o777, unix.O_RDONLY)
		}
		var err error
		dir, err = openDirBeneath(r.fd, parent, mkdir)
		if err != nil {
			return &fs.PathError{Op: op, Path: p, Err: err}
		}
		if h != nil {
			h.path, h.fd, h.ok = parent, dir, true
		} else {
			defer unix.Close(dir)
		}
	}
	if err := do(dir, name); err != nil {
		return &fs.PathError{Op: op, Path: p, Err: err}
	}
	return nil
}

// walkOnly has the tree's folders opened one name at a time, as on a
// kernel without openat2 (statefile.WalkDir); tests set it to cover both.
var walkOnly atomic.Bool

// openDir opens the folder dir (a verified path) beneath the top.
func (r *Root) openDir(dir string) (int, error) { return openDirBeneath(r.fd, dir, nil) }

// OpenDirBeneath opens the folder dir (a path from git) beneath the
// folder open at base as git walks a tree, following no link on the way:
// a link or a file on the way is ErrNotDir, as a path git takes for gone
// (has_symlink_leading_path). Reads may use it; writes go through Root.
func OpenDirBeneath(base int, dir string) (int, error) { return openDirBeneath(base, dir, nil) }

// openDirBeneath opens the folder dir (a verified path) beneath the folder
// open at base with statefile.OpenDir, making the missing folders on the
// way with mkdir (nil: none).
func openDirBeneath(base int, dir string, mkdir statefile.Mkdir) (int, error) {
	open := statefile.OpenDir
	if walkOnly.Load() {
		open = statefile.WalkDir
	}
	fd, err := open(base, dir, unix.O_RDONLY, mkdir)
	return fd, notDir(err)
}

// notDir turns "a link or a file on the way" into ErrNotDir, and the path
// of the name that failed into the error alone: the caller names the path.
func notDir(err error) error {
	var nr *statefile.NotRegularError
	if errors.As(err, &nr) {
		return ErrNotDir
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		return ErrNotDir
	}
	return err
}

// fileInfo is Lstat's answer.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.st.Size }
func (f *fileInfo) ModTime() time.Time { return time.Unix(f.st.Mtim.Unix()) }
func (f *fileInfo) IsDir() bool        { return f.Mode().IsDir() }
func (f *fileInfo) Sys() any           { return &f.st }

func (f *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(f.st.Mode & 0o777)
	switch f.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}

// Folder is a folder of the tree held open by descriptor, for many
// operations on its entries at the cost of one lookup: a rollback deleting
// 300,000 files opens each of their folders once, not once a file.
type Folder struct {
	fd   int
	path string // "" for the top
	own  bool   // fd is the folder's own descriptor, closed by Close
}

// OpenFolder opens the folder p ("" for the top) beneath the top, following
// no link; a link or a file on the way is ErrNotDir.
func (r *Root) OpenFolder(p string) (*Folder, error) {
	if p == "" || p == "." {
		return &Folder{fd: r.fd}, nil
	}
	if err := Verify(p); err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	fd, err := r.openDir(p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return &Folder{fd: fd, path: p, own: true}, nil
}

// Close releases the folder.
func (f *Folder) Close() error {
	if !f.own {
		return nil
	}
	f.own = false
	return unix.Close(f.fd)
}

// Remove unlinks the file or link name of the folder; a folder is
// refused (EISDIR), as Root.Remove does.
func (f *Folder) Remove(name string) error {
	return f.at("remove", name, func(name string) error { return unix.Unlinkat(f.fd, name, 0) })
}

// RemoveEmptyDir removes the folder name of the folder if it is empty; a
// link there is refused (ENOTDIR), never followed, as Root.RemoveEmptyDir
// does.
func (f *Folder) RemoveEmptyDir(name string) error {
	return f.at("rmdir", name, func(name string) error { return unix.Unlinkat(f.fd, name, unix.AT_REMOVEDIR) })
}

// at checks name, one name of the folder, and runs op on it. The folder's
// path passed Verify when it was opened, and Verify checks a path name by
// name: the folder's path and name pass it as the path they make does,
// which is only made for an error.
func (f *Folder) at(op, name string, do func(name string) error) error {
	err := Verify(name)
	if err == nil && strings.Contains(name, "/") {
		err = fmt.Errorf("%q is not one name", name)
	}
	if err == nil {
		err = do(name)
	}
	if err == nil {
		return nil
	}
	p := name
	if f.path != "" {
		p = f.path + "/" + name
	}
	var bad *Error
	if errors.As(err, &bad) {
		err = &Error{Path: p, Rule: bad.Rule}
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// Release drops the entries writes replace (RenameFromStatIn,
// LinkUnnamedIn) off the caller's thread: each is opened (O_PATH) just
// before its unlink, and the descriptor closed by workers of its own, so
// the freeing of its blocks (on a discard mount, ~2 ms a file) no longer
// waits in line with the rollback. The entries are gone from the tree
// either way; only when their space comes back moves.
type Release struct {
	queue  int
	mu     sync.Mutex
	fds    chan int
	closed bool
	wg     sync.WaitGroup
	handed int // entries queued, for tests
}

// releaseWorkers close the descriptors: each close may wait on the disk,
// and the disk takes several discards at once.
const releaseWorkers = 8

// NewRelease makes a Release holding at most queue entries waiting to be
// dropped: past that, an entry is dropped at its unlink.
func NewRelease(queue int) *Release { return &Release{queue: queue} }

// Release has the door hand r the entries its writes replace (nil: none).
func (r *Root) Release(rel *Release) { r.release = rel }

// unlink removes name from dir, its last reference dropped by r.release
// when there is one. The returned func hands that reference over: called
// once the new entry is at the name, so that neither the hand-over nor a
// close when the queue is full (which waits on the disk) lengthens the
// moment the path is missing.
func (r *Root) unlink(dir int, name string) (drop func()) {
	rel := r.release
	if rel == nil || rel.queue <= 0 {
		_ = unix.Unlinkat(dir, name, 0)
		return func() {}
	}
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Unlinkat(dir, name, 0)
		return func() {}
	}
	if unix.Unlinkat(dir, name, 0) != nil {
		unix.Close(fd)
		return func() {}
	}
	return func() { rel.put(fd) }
}

func (rel *Release) put(fd int) {
	rel.mu.Lock()
	defer rel.mu.Unlock()
	if rel.closed {
		unix.Close(fd)
		return
	}
	if rel.fds == nil {
		rel.fds = make(chan int, rel.queue)
		for i := 0; i < releaseWorkers; i++ {
			rel.wg.Add(1)
			go func() {
				defer rel.wg.Done()
				for fd := range rel.fds {
					unix.Close(fd)
				}
			}()
		}
	}
	select {
	case rel.fds <- fd:
		rel.handed++
	default:
		unix.Close(fd) // the queue is full: dropped here
	}
}

// Wait returns once every entry handed over is dropped; later ones are
// dropped at their unlink.
func (rel *Release) Wait() {
	if rel == nil {
		return
	}
	rel.mu.Lock()
	rel.closed = true
	if rel.fds != nil {
		close(rel.fds)
	}
	rel.mu.Unlock()
	rel.wg.Wait()
}
