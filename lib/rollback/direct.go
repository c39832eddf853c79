package rollback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	git "github.com/libgit2/git2go/v34"
	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/runpace"
	"github.com/git-venom/git-venom/lib/treepath"
)

// A file whose blob git's checkout writes byte for byte is written here as
// git's write_entry (entry.c, git 2.39) does: mode 0777 or 0666 less the
// umask, a link holding the blob's bytes (a regular file under
// core.symlinks=false), nothing resolved by name. git checkout-index
// writes the rest: what an attribute or core.autocrlf could convert, all
// files when a .gitattributes is written, odd modes or objects, and blobs
// over store.MemoryFileBytes, which git streams.

// gitStage is the folder of the stage checkout-index writes beneath
// (--prefix); the files written here sit beside it as "f<n>", and
// stageIndex, checkout-index's temporary index.
const (
	gitStage   = "git"
	stageIndex = "index"
)

// direct writes files into a stage.
type direct struct {
	odb      *git.Odb
	quiet    *store.NoConversion
	symlinks bool // core.symlinks: links are links, not files
	// root is the tree the files go to (nil: each is made in the stage by
	// name): a regular file is made in its own folder, unnamed, and then
	// named in the stage (see create).
	root *treepath.Root
}

// newDirect prepares the in-process writes of writes into the tree at
// root, or returns nil when none can be (then checkout-index writes them
// all).
func (ap *applier) newDirect(root *treepath.Root, writes []entry, symlinks bool) (*direct, func()) {
	for _, e := range writes {
		if strings.EqualFold(path.Base(e.path), ".gitattributes") {
			return nil, func() {}
		}
	}
	quiet := store.NewNoSmudge(ap.ctx, ap.r)
	odb, err := ap.r.Odb()
	if err != nil {
		return nil, func() {}
	}
	return &direct{odb: odb, quiet: quiet, symlinks: symlinks, root: root}, odb.Free
}

// symlinks reads core.symlinks as git does (true unless set false).
func (ap *applier) symlinks() bool {
	entries, err := ap.r.ConfigLast(ap.ctx, "core.symlinks")
	if err != nil {
		return true
	}
	e, ok := entries["core.symlinks"]
	if !ok {
		return true
	}
	if b, known := e.Bool(); known {
		return b
	}
	if n, err := config.ParseBytes(e.Value); err == nil {
		return n != 0
	}
	// Anything else git refuses: checkout-index then fails with git's error.
	return true
}

// staged is one file in the stage: its name there, whether it is a link,
// and whether it was written in process (capture.Written's Direct).
type staged struct {
	name         string
	link, direct bool
	// unnamed: made unnamed in its folder of the tree (direct.create).
	unnamed bool
	// held: still unnamed, open at fd, named nowhere yet: placed by a
	// link at its path (placeUnnamed), name is where it goes in the stage
	// if that cannot be done.
	held bool
	fd   int
}

// closeHeld closes the files of st still held unnamed: nothing of them
// is left anywhere.
func closeHeld(st []staged) {
	for i := range st {
		unhold(&st[i])
	}
}

// heldBudget is how many written files may wait unnamed, each holding a
// descriptor, for their placing (the rest are named in the stage): a
// quarter of the descriptors the process may open, at most 4,096.
var heldBudget = sync.OnceValue(func() int64 {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return int64(min(4096, lim.Cur/4))
})

// stageAll writes in process each of writes it can into the folder open
// at stage, as st[i]; the others' st[i] stays empty. Two threads share the
// writes when there are enough of them: inflating the blobs is most of
// the work, and libgit2 reads one object database from several threads.
// Which files may be written is decided first, on this thread: the
// attribute check keeps a cache of its own (store.NoConversion).
func (d *direct) stageAll(ctx context.Context, stage int, writes []entry, st []staged, prog *Progress) error {
	var mine []int
	for i, e := range writes {
		if d.mayWrite(e) {
			mine = append(mine, i)
		}
	}
	workers := 1
	if len(mine) >= 64 && runtime.GOMAXPROCS(0) > 1 {
		workers = 2
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			folders := &folderCache{root: d.root}
			defer folders.close()
			var pc runpace.Pacer
			for k := w; k < len(mine); k += workers {
				pc.Pace()
				// A signal stops the inflating within a file's time.
				if err := interrupt.Check(ctx); err != nil {
					errs[w] = err
					return
				}
				i := mine[k]
				s, err := d.write(stage, stagedName(i), writes[i], folders)
				if errors.Is(err, errNotDirect) {
					continue
				}
				if err != nil {
					errs[w] = fmt.Errorf("write %s: %w", writes[i].path, err)
					return
				}
				st[i] = s
				prog.add(1)
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// errNotDirect says a file is git's to write.
var errNotDirect = errors.New("not written in process")

// mayWrite says whether e is one to write in process, as far as its mode
// and attributes tell: a link (never converted, even written as a file),
// or a file no attribute could convert.
func (d *direct) mayWrite(e entry) bool {
	switch e.mode {
	case 0o120000:
		return true
	case 0o100644, 0o100755:
		return d.quiet.AttributesQuiet(e.path)
	}
	return false
}

// write writes e, which mayWrite allowed, into the folder open at stage
// as name, or returns errNotDirect when git must (nothing is then left at
// name). It is safe to call from several goroutines, each with folders of
// its own.
func (d *direct) write(stage int, name string, e entry, folders *folderCache) (staged, error) {
	link := e.mode == 0o120000
	id, err := git.NewOid(e.oid)
	if err != nil {
		return staged{}, errNotDirect
	}
	// A big blob is git's: checkout-index streams it to its file, where
	// a read here would hold it whole in memory, once a thread (a
	// checkpoint may hold a blob of zeros of any size, a few KiB packed).
	if size, typ, err := d.odb.ReadHeader(id); err != nil || typ != git.ObjectBlob || size > store.MemoryFileBytes {
		return staged{}, errNotDirect
	}
	obj, err := d.odb.Read(id)
	if err != nil {
		return staged{}, errNotDirect
	}
	defer obj.Free()
	if obj.Type() != git.ObjectBlob {
		return staged{}, errNotDirect
	}
	data := obj.Data()
	if link && d.symlinks {
		// git hands the blob to symlink() as a C string: a NUL would cut
		// it, and an empty target fails. git decides those.
		if len(data) == 0 || bytes.IndexByte(data, 0) >= 0 {
			return staged{}, errNotDirect
		}
		return staged{name: name, link: true, direct: true}, unix.Symlinkat(string(data), stage, name)
	}
	s := staged{name: name, direct: true, fd: -1}
	s.unnamed, s.fd, err = d.create(stage, name, e.path, filePerm(e.mode), data, folders)
	s.held = s.fd >= 0
	return s, err
}

// create makes the regular file name, mode perm less the umask, holding
// data, for the tree's path p: unnamed in p's folder (or the nearest above)
// so its inode lands near the folder's, else named in the stage
// (docs/rollback.md#where-new-files-are-made). While heldBudget allows, an
// unnamed file stays open as held (>= 0) for placeUnnamed; else held is -1.
func (d *direct) create(stage int, name, p string, perm uint32, data []byte, folders *folderCache) (unnamed bool, held int, err error) {
	if f := folders.open(treepath.Parent(p)); f != nil && !unnamedRefused.Load() {
		fd, err := f.CreateUnnamed(perm)
		if err == nil {
			err = writeAll(fd, data)
			if err == nil && hold() {
				return true, fd, nil
			}
			if err == nil {
				if err = treepath.LinkUnnamed(fd, stage, name); err != nil {
					// Nothing was named: the file goes when fd is closed.
					unnamedRefused.Store(true)
					unix.Close(fd)
					return false, -1, createNamed(stage, name, perm, data)
				}
			}
			if cerr := unix.Close(fd); err == nil {
				err = cerr
			}
			return true, -1, err
		}
		if noUnnamedFiles(err) {
			unnamedRefused.Store(true)
		}
	}
	return false, -1, createNamed(stage, name, perm, data)
}

// nameHeld names the file held unnamed s in the folder open at stage as
// s.name: by a link, or, where none can be made (no /proc, the stage on
// another file system), as a copy of its bytes and mode.
func nameHeld(stage int, s *staged) error {
	if treepath.LinkUnnamed(s.fd, stage, s.name) == nil {
		return nil
	}
	unnamedRefused.Store(true)
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		return err
	}
	data := make([]byte, st.Size)
	for off := 0; off < len(data); {
		n, err := unix.Pread(s.fd, data[off:], int64(off))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil && n == 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		off += n
	}
	return createNamed(stage, s.name, st.Mode&0o777, data)
}

// heldFiles counts the files held unnamed now (heldBudget).
var heldFiles atomic.Int64

// hold takes one file of heldBudget, if there is one left.
func hold() bool {
	if heldFiles.Add(1) <= heldBudget() {
		return true
	}
	heldFiles.Add(-1)
	return false
}

// unhold closes a file held unnamed and gives its place back.
func unhold(s *staged) {
	if s.held {
		unix.Close(s.fd)
		s.held = false
		heldFiles.Add(-1)
	}
}

// noUnnamedFiles says whether err is CreateUnnamed's refusal of unnamed
// files by the file system or the kernel, rather than a failure of this
// one file.
func noUnnamedFiles(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) ||
		errors.Is(err, errors.ErrUnsupported)
}

// filePerm is the mode git's checkout creates a file of the tree mode
// mode with, before the umask (write_entry).
func filePerm(mode uint32) uint32 {
	if mode == 0o100755 {
		return 0o777
	}
	return 0o666
}

// unnamedRefused is set once unnamed files cannot be made and named: every
// file is then made in the stage by name.
var unnamedRefused atomic.Bool

// createNamed makes the regular file name in the folder open at stage
// (O_CREAT|O_EXCL, no link followed), holding data.
func createNamed(stage int, name string, perm uint32, data []byte) error {
	fd, err := unix.Openat(stage, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return err
	}
	if err := writeAll(fd, data); err != nil {
		unix.Close(fd)
		return err
	}
	return unix.Close(fd)
}

// folderCache holds the folder of the tree a writing thread last made a
// file in: the files come in path order, a folder's together.
type folderCache struct {
	root   *treepath.Root
	path   string
	folder *treepath.Folder // nil: not a folder of the tree
	held   bool
}

// open returns the folder p ("" the top) of the tree, opened beneath the
// top without following a link, or, when p is not there as a folder (the
// rollback makes it when it places the file), the nearest folder above it
// that is: a folder made in it inherits its default ACL and, when it is
// setgid, its group and setgid bit, so a file made unnamed there takes the
// mode and group git's checkout gives the file in the folder it makes
// (made in the stage, the file took the stage's). nil: not even the top.
func (c *folderCache) open(p string) *treepath.Folder {
	if c.root == nil {
		return nil
	}
	if c.held && c.path == p {
		return c.folder
	}
	c.close()
	c.path, c.held = p, true
	for at := p; ; at = treepath.Parent(at) {
		if f, err := c.root.OpenFolder(at); err == nil {
			c.folder = f
			break
		}
		if at == "" {
			break
		}
	}
	return c.folder
}

func (c *folderCache) close() {
	if c.folder != nil {
		c.folder.Close()
	}
	c.folder, c.held = nil, false
}

// writeAll writes data to fd whole, as git's write_in_full.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// stagedName is the name of the n-th file written in process in the stage.
func stagedName(n int) string { return "f" + strconv.Itoa(n) }

// remakeGitWritten makes each file git's checkout-index wrote into the
// stage again, unnamed in its folder of the tree (or the nearest above,
// folderCache.open) with git's bytes, and names it in the stage in place
// of git's, so it takes the folder's default ACL and setgid group as git's
// checkout would (docs/rollback.md#where-new-files-are-made). Best effort:
// where it cannot (no unnamed files, another file system, no /proc), git's
// file stays as git wrote it.
func remakeGitWritten(root *treepath.Root, stage int, writes []entry, st []staged) {
	folders := &folderCache{root: root}
	defer folders.close()
	for i, e := range writes {
		if st[i].direct || st[i].link || e.mode == 0o120000 || unnamedRefused.Load() {
			continue
		}
		if err := remakeOne(folders, stage, st[i].name, e); err != nil {
			return
		}
	}
}

// remakeOne makes the staged file rel (git's) again unnamed in e's folder
// and puts it in place of rel in the stage.
func remakeOne(folders *folderCache, stage int, rel string, e entry) error {
	f := folders.open(treepath.Parent(e.path))
	if f == nil {
		return nil
	}
	dir, name := stage, rel
	if parent := treepath.Parent(rel); parent != "" {
		fd, err := treepath.OpenDirBeneath(stage, parent)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		dir, name = fd, rel[len(parent)+1:]
	}
	in, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	src := os.NewFile(uintptr(in), name)
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() {
		return errNotDirect
	}
	out, err := f.CreateUnnamed(filePerm(e.mode))
	if err != nil {
		if noUnnamedFiles(err) {
			unnamedRefused.Store(true)
		}
		return err
	}
	dst := os.NewFile(uintptr(out), name)
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	// Named beside git's file, then over it: the stage is ours (0700).
	tmp := name + ".unnamed"
	if err := treepath.LinkUnnamed(out, dir, tmp); err != nil {
		unnamedRefused.Store(true)
		return err
	}
	if err := unix.Renameat(dir, tmp, dir, name); err != nil {
		_ = unix.Unlinkat(dir, tmp, 0)
		return err
	}
	return nil
}
