// Package store is a capture's blob and tree storage: the tree path, which
// edits a base tree with the files a scan listed instead of staging them in
// an index (build.go); the raw blobs, files git would store as they are and
// whose ids are computed here instead of by git hash-object (rawblob.go);
// the one pack that takes a capture's new objects to disk; and the error
// of a capture's failing step, the same in every package of a capture
// (failed.go).
package store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	git "github.com/libgit2/git2go/v34"
	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/packset"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treeedit"
)

// The tree path builds a capture's tree without an index: the private
// index's tree (base) plus the paths status listed. git decides each
// blob id (hash-object runs the clean filters libgit2 cannot), unless
// nothing could convert the file (rawblob.go); bytes are packed only when
// they hash to that id, so what is stored is what git would store. New
// blobs and trees go to disk as one pack, not one loose file each.

// ErrNoTreePath sends a capture the index way.
var ErrNoTreePath = errors.New("the tree path does not apply")

// Files at most this large are stored through the in-memory pack; larger ones
// and any past memoryBudget go through git, streamed, as loose objects.
// MemoryFileBytes also bounds the blobs a rollback reads whole into memory
// (lib/rollback's in-process writes, private.NoteWritten): git streams the
// larger ones.
const (
	MemoryFileBytes = 4 << 20
	memoryBudget    = 64 << 20
)

// File is one path a capture stores: its mode from lstat.
type File struct {
	Path    string
	Mode    uint32 // 0o100644, 0o100755, 0o120000 or 0o160000 (a nested repository)
	Tracked bool   // the user's index holds the path
}

// treePathUsable says whether the tree path can give exactly the tree the
// index way would: git's view of modes must be the plain one, and the
// process must see the configuration git sees.
func treePathUsable(r *repo.Repo, lib *git.Repository) bool {
	for _, kv := range r.Git.Env {
		// git -c …: libgit2 cannot see those settings.
		if strings.HasPrefix(kv, "GIT_CONFIG_PARAMETERS=") || strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") {
			return false
		}
	}
	cfg, err := lib.Config()
	if err != nil {
		return false
	}
	defer cfg.Free()
	flag := func(name string, def bool) bool {
		v, err := cfg.LookupBool(name)
		if err != nil {
			return def
		}
		return v
	}
	// Modes and links as stat gives them, and no per-worktree configuration
	// that libgit2 1.5 might read differently.
	return flag("core.filemode", true) && flag("core.symlinks", true) && !flag("extensions.worktreeconfig", false)
}

// Build returns base edited with files (stored), removes and known (edits
// to objects the repository holds), or ErrNoTreePath when some path needs
// the index way. The new objects are returned, held in memory:
// Snapshot.Store writes them; but past memoryBudget, blobs are written as
// they are read into a held pack of their own (sink.go), whose ids are
// returned as spilled.
func Build(ctx context.Context, r *repo.Repo, base *git.Oid, files []File, removes []string, known []treeedit.Edit) (tree *git.Oid, held []Object, spilled []git.Oid, err error) {
	main, err := r.Lib()
	if err != nil {
		return nil, nil, nil, err
	}
	if !treePathUsable(r, main) {
		return nil, nil, nil, ErrNoTreePath
	}
	// The new objects are made here, in memory, without libgit2 (which
	// would look each one up on disk before writing it, and copy it): blobs
	// read from files and links, and the trees on their paths. Base trees
	// are read from the repository; the new objects reach the disk as one
	// pack, with the checkpoint's commit when the caller makes one
	// (Snapshot.Store).
	if len(files) > 0 {
		if err := testhook.PointIn(ctx, "capture-object-write"); err != nil {
			return nil, nil, nil, Failed("hash-object", err)
		}
	}
	h := &holder{}
	ids, spilled, err := storeFiles(ctx, r, h, files)
	if err != nil {
		return nil, nil, nil, err
	}
	// Known edits alone (a carry's reverts: 300,000 after a rollback
	// deleted that many files) are edited as given, not copied first.
	edits := known
	if len(files)+len(removes) > 0 {
		edits = make([]treeedit.Edit, 0, len(files)+len(removes)+len(known))
		edits = append(edits, known...)
		for _, p := range removes {
			edits = append(edits, treeedit.Edit{Path: p})
		}
		for i, f := range files {
			edits = append(edits, treeedit.Edit{Path: f.Path, Mode: f.Mode, ID: ids[i]})
		}
	}
	ids = nil
	if err := testhook.PointIn(ctx, "capture-write-tree"); err != nil {
		return nil, nil, nil, Failed("write-tree", err)
	}
	tree, err = treeedit.Build(main, base, edits, func(id git.Oid, data []byte) error {
		h.add(id, packfile.Tree, h.keep(data))
		return nil
	})
	if err != nil {
		return nil, nil, nil, Failed("write-tree", err)
	}
	edits = nil
	held, err = h.fresh(filepath.Join(r.CommonDir, "objects"))
	if err != nil {
		return nil, nil, nil, Failed("write-pack", err)
	}
	return tree, held, spilled, nil
}

// storeFiles stores each file's blob and returns the ids, in files' order.
func storeFiles(ctx context.Context, r *repo.Repo, h *holder, files []File) ([]git.Oid, []git.Oid, error) {
	ids := make([]git.Oid, len(files))
	tree, err := openBeneath(r.Top)
	if err != nil {
		return nil, nil, err
	}
	defer tree.close()
	var regular []int
	for i, f := range files {
		if f.Mode == 0o160000 {
			// A nested repository is its HEAD commit, as update-index records it.
			id, err := tree.nestedHead(f.Path)
			if err != nil {
				return nil, nil, ErrNoTreePath
			}
			ids[i] = id
			continue
		}
		if f.Mode == 0o120000 {
			// A link's blob is its target, never filtered.
			target, err := tree.readlink(f.Path)
			if err != nil {
				return nil, nil, ErrNoTreePath
			}
			ids[i] = blobID(sha1.New(), []byte(target))
			h.add(ids[i], packfile.Blob, []byte(target))
			continue
		}
		regular = append(regular, i)
	}
	if len(regular) == 0 {
		return ids, nil, nil
	}
	var viaGit []int
	sum := sha1.New()
	var buf []byte
	whole := func(size int64) bool { return size <= MemoryFileBytes }
	// read hashes file i's bytes, whole unless it is large.
	read := func(i int) (rawBlob, error) {
		fd, size, err := tree.openRegular(files[i].Path)
		if err != nil {
			return rawBlob{}, ErrNoTreePath
		}
		var raw rawBlob
		raw, buf, err = readBlob(fd, size, files[i].Path, whole, sum, buf)
		unix.Close(fd)
		if err != nil {
			return rawBlob{}, ErrNoTreePath
		}
		return raw, nil
	}
	s := newSink(r, h)
	defer s.abort()
	comp := packfile.NewCompressor()
	store := func(i int, raw rawBlob) error {
		ids[i] = raw.id
		return s.put(raw.id, raw.data, comp)
	}
	// First the files git would store as they are (rawblob.go): no
	// attribute could convert them and they hold no CR. Their blob is
	// their bytes, and git is not asked.
	nc := NewNoConversion(r)
	var asked, quiet []int
	for _, i := range regular {
		if nc.AttributesQuiet(files[i].Path) {
			quiet = append(quiet, i)
		} else {
			asked = append(asked, i)
		}
	}
	// A CR byte is changed on the way in only under a line-ending
	// attribute or core.autocrlf (rawblob.go, NewNoSmudge): without them
	// such a file (most binary ones: 477 MiB of them went through git
	// hash-object) is stored as it is too. Decided up front for many
	// files, so that they are stored as they are first read.
	var crQuiet *NoConversion
	var crOK []bool
	if len(quiet) >= manyFiles {
		crQuiet = NewNoSmudge(ctx, r)
		crOK = make([]bool, len(quiet))
		for k, i := range quiet {
			crOK[k] = crQuiet.AttributesQuiet(files[i].Path)
		}
	}
	got, err := readQuiet(ctx, r.Top, files, quiet, crOK, ids, s)
	switch {
	case errors.Is(err, ErrNoTreePath):
		return nil, nil, err
	case ctx.Err() != nil:
		return nil, nil, Failed("hash-object", context.Cause(ctx))
	case err != nil:
		return nil, nil, Failed("write-pack", err)
	}
	for k, i := range quiet {
		switch got[k] {
		case readHasCR:
			if crQuiet == nil {
				crQuiet = NewNoSmudge(ctx, r)
			}
			if crOK == nil && crQuiet.AttributesQuiet(files[i].Path) {
				raw, err := read(i)
				if err != nil {
					return nil, nil, err
				}
				if raw.data != nil {
					if err := store(i, raw); err != nil {
						return nil, nil, Failed("write-pack", err)
					}
					continue
				}
			}
			// Line endings may change: git decides.
			asked = append(asked, i)
		case readLarge:
			// Large: git stores it, streamed, with this very id.
			viaGit = append(viaGit, i)
		}
	}
	sort.Ints(asked)
	// The others: git says what their blob is, and a file whose bytes are
	// that blob is stored by us.
	var paths []string
	for _, i := range asked {
		paths = append(paths, files[i].Path)
	}
	var want []git.Oid
	if len(paths) > 0 {
		var err error
		if want, err = hashObjects(ctx, r, paths); err != nil {
			return nil, nil, err
		}
	}
	for k, i := range asked {
		raw, err := read(i)
		if err != nil {
			return nil, nil, err
		}
		if raw.id != want[k] && raw.hasCR && files[i].Tracked {
			// git converted the file, maybe its line endings: for a tracked
			// file that conversion depends on the index's blob (git keeps
			// CRLF that the index already has), which hash-object does not
			// read. The index way decides.
			return nil, nil, ErrNoTreePath
		}
		if raw.id != want[k] || raw.data == nil {
			// A filter made the blob, the file moved on since git read it,
			// or it is large: git stores it.
			viaGit = append(viaGit, i)
			continue
		}
		if err := store(i, raw); err != nil {
			return nil, nil, Failed("write-pack", err)
		}
	}
	spilled, err := s.finish(r)
	if err != nil {
		return nil, nil, Failed("write-pack", err)
	}
	for _, i := range viaGit {
		id, err := storeBeneath(ctx, r, tree, files[i].Path)
		if err != nil {
			return nil, nil, err
		}
		ids[i] = id
	}
	return ids, spilled, nil
}

// storeBeneath has git store the file at path as its blob, filters applied
// as for path: opened here beneath the top, no link followed, and handed to
// git as its stdin (hash-object -w --stdin --path), streamed; by name, git
// followed a folder swapped for a link out of the tree. One git a file:
// only big or converted files come here. A file gone or not regular now
// is ErrNoTreePath.
func storeBeneath(ctx context.Context, r *repo.Repo, tree *beneath, path string) (git.Oid, error) {
	if err := testhook.PointIn(ctx, "capture-hash-object"); err != nil {
		return git.Oid{}, Failed("hash-object", err)
	}
	fd, _, err := tree.openRegular(path)
	if err != nil {
		return git.Oid{}, ErrNoTreePath
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	out, err := r.Git.RunCall(ctx, gitcli.Call{Stdin: f}, "hash-object", "-w", "--stdin", "--path="+path)
	if err != nil {
		if ctx.Err() != nil {
			return git.Oid{}, Failed("hash-object", ctx.Err())
		}
		return git.Oid{}, ErrNoTreePath
	}
	id, err := git.NewOid(strings.TrimSpace(string(out)))
	if err != nil {
		return git.Oid{}, ErrNoTreePath
	}
	return *id, nil
}

// hashObjects asks git for the blob ids of paths, filters applied,
// storing nothing (storeBeneath stores). A file gone or changed into something else since
// status gives ErrNoTreePath: the index way reports it as git would.
func hashObjects(ctx context.Context, r *repo.Repo, paths []string) ([]git.Oid, error) {
	if err := testhook.PointIn(ctx, "capture-hash-object"); err != nil {
		return nil, Failed("hash-object", err)
	}
	var list bytes.Buffer
	for _, p := range paths {
		writePathLine(&list, p)
	}
	out, err := r.Git.RunCall(ctx, gitcli.Call{Stdin: bytes.NewReader(list.Bytes())}, "hash-object", "--stdin-paths")
	if err != nil {
		if ctx.Err() != nil {
			return nil, Failed("hash-object", ctx.Err())
		}
		return nil, ErrNoTreePath
	}
	fields := strings.Fields(string(out))
	if len(fields) != len(paths) {
		return nil, ErrNoTreePath
	}
	ids := make([]git.Oid, len(fields))
	for i, f := range fields {
		id, err := git.NewOid(f)
		if err != nil {
			return nil, ErrNoTreePath
		}
		ids[i] = *id
	}
	return ids, nil
}

// rawBlob is a file's bytes taken as a blob, unconverted.
type rawBlob struct {
	id    git.Oid
	hasCR bool
	data  []byte // the bytes, when asked to keep them (valid until the next read)
}

// blobID is the id of a blob of data, hashed with h.
func blobID(h hash.Hash, data []byte) git.Oid {
	h.Reset()
	writeBlobHeader(h, int64(len(data)))
	h.Write(data)
	var id git.Oid
	h.Sum(id[:0])
	return id
}

func writeBlobHeader(h hash.Hash, size int64) {
	var hdr [32]byte
	b := append(hdr[:0], "blob "...)
	b = strconv.AppendInt(b, size, 10)
	h.Write(append(b, 0))
}

// readBlob hashes the bytes of the regular file open at fd, of size
// bytes (beneath.openRegular), as a blob with h, keeping them when keep
// says so of its size, else streaming them; buf is a buffer to reuse,
// returned grown as needed; path names the file in errors. Four system
// calls for a small file (open, fstat, read, close): a capture of many
// new files is mostly these.
func readBlob(fd int, size int64, path string, keep func(size int64) bool, h hash.Hash, buf []byte) (rawBlob, []byte, error) {
	var err error
	var b rawBlob
	h.Reset()
	writeBlobHeader(h, size)
	// One buffer of the file's size (or of 1 MiB, streaming), and one
	// byte more to see that it did not grow.
	whole := keep(size)
	n := int64(1 << 20)
	if whole {
		n = size
	}
	if int64(cap(buf)) < n+1 {
		buf = make([]byte, n+1)
	}
	buf = buf[:n+1]
	var got int64
	for {
		want := min(int64(len(buf)), size+1-got)
		if whole {
			want = size + 1 - got
		}
		var m int
		if whole {
			m, err = unix.Read(fd, buf[got:got+want])
		} else {
			m, err = unix.Read(fd, buf[:want])
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return rawBlob{}, buf, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if !whole {
			h.Write(buf[:m])
			b.hasCR = b.hasCR || bytes.IndexByte(buf[:m], '\r') >= 0
		}
		got += int64(m)
		// A regular file reads short only at its end: no second read
		// to see it, for each of 300,000 small files.
		if m == 0 || got > size || int64(m) < want {
			break
		}
	}
	if got != size {
		return rawBlob{}, buf, errors.New("the file changed while read")
	}
	if whole {
		b.data = buf[:size]
		h.Write(b.data)
		b.hasCR = bytes.IndexByte(b.data, '\r') >= 0
	}
	h.Sum(b.id[:0])
	return b, buf, nil
}

// writePathLine writes one line of hash-object --stdin-paths' input. git
// unquotes a line that starts with '"' and drops a CR before the LF, so
// such paths, and those with control characters, go C-quoted.
func writePathLine(b *bytes.Buffer, p string) {
	quote := strings.HasPrefix(p, `"`)
	for i := 0; i < len(p) && !quote; i++ {
		quote = p[i] < 0x20 || p[i] == 0x7f
	}
	if !quote {
		b.WriteString(p)
		b.WriteByte('\n')
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("\"\n")
}

// nestedHead is the commit a nested repository's HEAD names.
func nestedHead(dir string) (git.Oid, error) {
	nested, err := git.OpenRepositoryExtended(dir, git.RepositoryOpenNoSearch, "")
	if err != nil {
		return git.Oid{}, err
	}
	defer nested.Free()
	ref, err := nested.Head()
	if err != nil {
		return git.Oid{}, err
	}
	defer ref.Free()
	resolved, err := ref.Resolve()
	if err != nil {
		return git.Oid{}, err
	}
	defer resolved.Free()
	return *resolved.Target(), nil
}

// Object is one git object held in memory until a pack stores it.
type Object struct {
	ID   git.Oid
	Type int // packfile.Commit, Tree, Blob
	Data []byte
	// Stored: the repository held it when the capture looked. WritePack
	// leaves it out; the data is kept in case the commit relies on it and
	// no ref reaches it (capture.StoreCommit writes it then).
	Stored bool
}

// holder gathers a capture's new objects. Their bytes are copied into
// large shared chunks, not one allocation each: a capture of 300,000 small
// files holds 300,000 blobs.
type holder struct {
	objs  []Object
	chunk []byte
}

const holdChunk = 1 << 20

// keep copies data into the holder's memory and returns the copy.
func (h *holder) keep(data []byte) []byte {
	if len(data) > holdChunk/4 {
		return append([]byte(nil), data...)
	}
	if cap(h.chunk)-len(h.chunk) < len(data) {
		h.chunk = make([]byte, 0, holdChunk)
	}
	start := len(h.chunk)
	h.chunk = append(h.chunk, data...)
	return h.chunk[start:len(h.chunk):len(h.chunk)]
}

func (h *holder) add(id git.Oid, typ int, data []byte) {
	h.objs = append(h.objs, Object{ID: id, Type: typ, Data: data})
}

// fresh returns the held objects, each once (two files of one content are
// one object, and a pack lists each once), those the repository at
// objectsDir holds already marked Stored. They come sorted by id.
func (h *holder) fresh(objectsDir string) ([]Object, error) {
	objs := h.objs
	h.objs = nil
	sort.Slice(objs, func(i, j int) bool { return bytes.Compare(objs[i].ID[:], objs[j].ID[:]) < 0 })
	disk, err := openDiskObjects(objectsDir)
	if err != nil {
		return nil, err
	}
	defer disk.close()
	out := objs[:0]
	for i, o := range objs {
		if i > 0 && objs[i-1].ID == o.ID {
			continue
		}
		o.Stored = disk.has(&o.ID)
		out = append(out, o)
	}
	clear(objs[len(out):])
	return out, nil
}

// WritePack writes objs, but those Stored, and again (objects the
// repository holds, read from it one at a time: capture.StoreCommit) to
// the repository as one pack file with its index, without deltas (finding
// deltas among a thousand changed files would cost more than the
// capture's whole scan; git-venom's merges and the user's own gc repack
// them), and records it as git-venom's (packset).
func WritePack(r *repo.Repo, objs []Object, again ...git.Oid) error {
	n := len(again)
	for i := range objs {
		if !objs[i].Stored {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	// A pack is named by its bytes. One of these objects written before
	// (an earlier dry run's hold of the same S) has this name, and a
	// person's git repack -a -d that listed it unkept when it started
	// deletes it when it ends, the .keep added since notwithstanding: the
	// pack is written again, salted, until its name is new.
	lost := 0
	sync := r.Syncs(repo.FsyncPack) // as git syncs a pack it writes
	for salt := 0; ; salt++ {
		w, err := packfile.CreateWith(filepath.Join(r.CommonDir, "objects", "pack"), n, packfile.Options{Salt: salt, Sync: sync})
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.Stored {
				continue
			}
			if err := w.Add(o.ID, o.Type, o.Data); err != nil {
				w.Abort()
				return err
			}
		}
		if err := addAgain(r, w, again); err != nil {
			w.Abort()
			return err
		}
		if _, err := w.Seal(); err != nil {
			return err
		}
		if w.Exists() && salt < maxSalt {
			w.Discard()
			continue
		}
		if testSealed != nil {
			testSealed()
		}
		err = installPack(r, w)
		if errors.Is(err, fs.ErrNotExist) && w.TempGone() && lost < 3 {
			// git gc --prune=now (git prune) deletes every tmp_* file in
			// objects/pack, ours while we write it: written again.
			lost++
			continue
		}
		return err
	}
}

// testSealed, set by this package's tests only, runs between a pack's
// seal and its install: where a person's git prune deletes its files.
var testSealed func()

// maxSalt bounds the packs of the same objects WritePack tells apart.
const maxSalt = 64

// installPack installs the sealed w as a capture's pack: held until
// the command's refs are made (packset.Hold), then recorded as
// git-venom's (packset.Mark).
func installPack(r *repo.Repo, w *packfile.Writer) error {
	name := w.Name()
	// Kept until the command's refs are made (packset.Hold).
	if err := packset.Hold(w.Dir(), name); err != nil {
		w.Discard()
		return err
	}
	if err := w.Install(); err != nil {
		return err
	}
	// Between the install and the record: a kill here leaves a held pack
	// the record does not name.
	if err := testhook.Point("capture-pack-installed"); err != nil {
		return err
	}
	// After the install, so that the record never names a pack being
	// written; a crash between the two leaves one pack to the user's gc
	// once the next Maintain has let go of its hold.
	return packset.Mark(r.StateDir, name)
}

// addAgain adds the objects again to w, read from the repository
// through the command's own handle, which still reads a pack deleted
// since it opened it. A blob past MemoryFileBytes (a file git hash-object
// stored) is streamed into w, not read whole: a 1 GiB file costs the
// compressor's buffers, not 1 GiB (againStream).
func addAgain(r *repo.Repo, w *packfile.Writer, again []git.Oid) error {
	if len(again) == 0 {
		return nil
	}
	odb, err := r.Odb()
	if err != nil {
		return err
	}
	defer odb.Free()
	for i := range again {
		id := &again[i]
		if size, typ, err := odb.ReadHeader(id); err == nil && typ == git.ObjectBlob && size > MemoryFileBytes {
			streamed, err := againStream(r, odb, w, id, int64(size))
			if err != nil {
				return fmt.Errorf("object %s: %w", id.String(), err)
			}
			if streamed {
				continue
			}
		}
		obj, err := odb.Read(id)
		if err != nil {
			return fmt.Errorf("object %s: %w", id.String(), err)
		}
		err = w.Add(*id, int(obj.Type()), obj.Data())
		obj.Free()
		if err != nil {
			return err
		}
	}
	return nil
}

// againStream adds the blob id of size bytes to w as it reads it: from
// libgit2's stream of a loose object, or else from git cat-file, which
// streams a packed one (past core.bigFileThreshold, git hash-object
// writes a pack of its own). streamed is false when neither could start,
// nothing written: the caller reads it whole, and that read's error says
// whether it is gone. An error once the entry is begun fails the pack.
func againStream(r *repo.Repo, odb *git.Odb, w *packfile.Writer, id *git.Oid, size int64) (streamed bool, err error) {
	if s, err := odb.NewReadStream(id); err == nil {
		defer s.Free()
		testhook.Counted("again-streamed-loose", 1)
		return true, w.AddStream(*id, packfile.Blob, size, capped{s})
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.Git.RunCall(ctx, gitcli.Call{Stdout: pw}, "cat-file", "blob", id.String())
		pw.CloseWithError(err)
		done <- err
	}()
	in := bufio.NewReaderSize(pr, 64<<10)
	if _, err := in.Peek(1); err != nil {
		pr.CloseWithError(err)
		<-done
		return false, nil
	}
	testhook.Counted("again-streamed-git", 1)
	err = w.AddStream(*id, packfile.Blob, size, in)
	// Stopped early, the read leaves git's writes failing, and git ends.
	pr.CloseWithError(errors.New("read no further"))
	if gitErr := <-done; err == nil {
		err = gitErr
	}
	return true, err
}

// capped reads a libgit2 stream into no more of a buffer than its
// length: git2go's Read fills the buffer to its capacity.
type capped struct{ s *git.OdbReadStream }

func (c capped) Read(p []byte) (int, error) { return c.s.Read(p[:len(p):len(p)]) }
