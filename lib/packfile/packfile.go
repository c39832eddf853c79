// Package packfile writes a git pack (version 2, no deltas) and its index
// (version 2) into objects/pack, as gitformat-pack.txt describes them:
// each of a capture's few new objects compressed once as it comes, the
// index built from what was written (libgit2's packbuilder hashed each
// again and went through its indexer).
package packfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Object types as a pack records them.
const (
	Commit = 1
	Tree   = 2
	Blob   = 3
	Tag    = 4
)

// Writer writes one pack. Add each object, then Finish; Abort on failure.
type Writer struct {
	dir   string
	f     *os.File
	buf   *bufio.Writer
	sum   hash.Hash // of every byte of the pack so far
	off   uint64
	count uint32
	want  uint32
	ents  []entry
	comp  *Compressor
	opts  Options
	// uncounted: the header's count is written at Seal, and the pack's
	// checksum computed then, reading the file back (CreateUncounted).
	uncounted bool
	// After Seal: the finished files under their temporary names.
	name, packTmp, idxTmp string
}

// Options shape how a pack is written.
type Options struct {
	// Prefix starts the temporary files' names (default "tmp_pack_").
	Prefix string
	// Sync fsyncs the pack and its index before they get their names, and
	// the folder after, as git does before it removes what a new pack
	// replaces.
	Sync bool
	// InstallPoint names the fault point (testhook) between the pack's
	// rename and its index's, if any.
	InstallPoint string
	// Salt ends the first object's zlib stream with that many empty
	// stored blocks: the same objects make other bytes, so a pack of
	// them gets a name of its own (Exists).
	Salt int
}

type entry struct {
	id  [20]byte
	off uint64
	crc uint32
}

// Create starts a pack of exactly n objects in dir (objects/pack).
func Create(dir string, n int) (*Writer, error) {
	return CreateWith(dir, n, Options{})
}

// CreateUncounted starts a pack whose number of objects is known only
// when it is sealed: a capture streams its blobs into it as it reads
// them, and two files of one content are one object. Seal writes the
// count into the header and computes the checksum then, reading the file
// back once (from the page cache) where a counted pack sums what it
// writes.
func CreateUncounted(dir string, opts Options) (*Writer, error) {
	w, err := CreateWith(dir, 1, opts)
	if err != nil {
		return nil, err
	}
	w.want, w.uncounted = 1<<31, true
	// The header goes out as it is; what follows is summed at Seal.
	if err := w.buf.Flush(); err != nil {
		w.Abort()
		return nil, err
	}
	w.buf.Reset(w.f)
	return w, nil
}

// Count is the number of objects added so far.
func (w *Writer) Count() int { return int(w.count) }

// CreateWith is Create with options.
func CreateWith(dir string, n int, opts Options) (*Writer, error) {
	if n <= 0 || n > 1<<31 {
		return nil, fmt.Errorf("a pack of %d objects", n)
	}
	if opts.Prefix == "" {
		opts.Prefix = "tmp_pack_"
	}
	f, err := os.CreateTemp(dir, opts.Prefix)
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, f: f, sum: sha1.New(), want: uint32(n), opts: opts, comp: NewCompressor()}
	w.buf = bufio.NewWriterSize(io.MultiWriter(f, w.sum), 64<<10)
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(n))
	if _, err := w.buf.Write(hdr[:]); err != nil {
		w.Abort()
		return nil, err
	}
	w.off = 12
	return w, nil
}

// storedBelow: objects smaller than this go into the pack as zlib stored
// blocks, uncompressed. Deflate saves a few bytes at most on them, and
// building its Huffman tables was most of the cost of packing the 300,000
// small files of a large capture; git reads any zlib stream, and a later
// repack compresses them again.
const storedBelow = 256

// Compressor makes pack entries. One is used by one goroutine at a time;
// a capture compresses on as many as there are cores, each with its own.
type Compressor struct {
	zbuf bytes.Buffer
	z    *zlib.Writer
	raw  *zlib.Writer // stored blocks
}

func NewCompressor() *Compressor {
	c := &Compressor{}
	// git writes loose objects at core.looseCompression's default, speed
	// first; a capture's pack holds what git add would have written loose.
	c.z, _ = zlib.NewWriterLevel(&c.zbuf, zlib.BestSpeed)
	c.raw, _ = zlib.NewWriterLevel(&c.zbuf, zlib.NoCompression)
	return c
}

// Entry returns the pack entry of an object of type typ holding data
// (its header and zlib stream) and the entry's CRC-32, as the index
// records it. The bytes are valid until the next call.
func (c *Compressor) Entry(typ int, data []byte) ([]byte, uint32, error) {
	return c.entry(typ, data, 0)
}

// entry is Entry with salt empty stored blocks (zlib's sync flush) before
// the stream's end: the data read back is the same.
func (c *Compressor) entry(typ int, data []byte, salt int) ([]byte, uint32, error) {
	c.zbuf.Reset()
	var hdr [16]byte
	c.zbuf.Write(entryHeader(&hdr, typ, uint64(len(data))))
	z := c.z
	if len(data) < storedBelow || Incompressible(data) {
		z = c.raw
	}
	z.Reset(&c.zbuf)
	if _, err := z.Write(data); err != nil {
		return nil, 0, err
	}
	for range salt {
		if err := z.Flush(); err != nil {
			return nil, 0, err
		}
	}
	if err := z.Close(); err != nil {
		return nil, 0, err
	}
	out := c.zbuf.Bytes()
	return out, crc32.ChecksumIEEE(out), nil
}

// entryHeader is an entry's header in hdr: type and size, the size 4
// bits first, then 7 bits a byte, each byte but the last with its top
// bit set.
func entryHeader(hdr *[16]byte, typ int, size uint64) []byte {
	b := byte(typ<<4) | byte(size&0x0f)
	size >>= 4
	n := 0
	for size != 0 {
		hdr[n] = b | 0x80
		n++
		b = byte(size & 0x7f)
		size >>= 7
	}
	hdr[n] = b
	return hdr[:n+1]
}

// Incompressible says whether data looks like it would not shrink under
// deflate: its first bytes' byte histogram carries more than 7.5 bits of
// entropy a byte, as compressed and encrypted files (archives, images,
// model weights) and random bytes do, and text and code (4 to 6 bits)
// never. Deflating such data at git's speed-first level costs four times
// storing it and saves nothing; a wrong guess costs only size, and a
// later repack compresses the object again.
func Incompressible(data []byte) bool {
	const sample = 4096
	if len(data) < sample {
		return false
	}
	var hist [256]uint32
	for _, c := range data[:sample] {
		hist[c]++
	}
	// sum over bytes of p*log2(1/p), with p = n/sample.
	var bits float64
	for _, n := range hist {
		if n != 0 {
			p := float64(n) / sample
			bits -= p * math.Log2(p)
		}
	}
	return bits > 7.5
}

// Add writes one object of type typ whose id is id (the caller's: Add does
// not hash data again). Each id is added once: git's index-pack refuses a
// pack that holds an object twice.
func (w *Writer) Add(id [20]byte, typ int, data []byte) error {
	salt, err := w.nextSalt()
	if err != nil {
		return err
	}
	raw, crc, err := w.comp.entry(typ, data, salt)
	if err != nil {
		return err
	}
	return w.addEntry(id, raw, crc)
}

// AddStream is Add for an object of size bytes read from r as it is
// written: its memory is the compressor's, however large the object. r
// must give exactly size bytes; otherwise AddStream fails, and the pack,
// holding part of an entry, is to be aborted.
func (w *Writer) AddStream(id [20]byte, typ int, size int64, r io.Reader) error {
	salt, err := w.nextSalt()
	if err != nil {
		return err
	}
	in := bufio.NewReaderSize(r, 64<<10)
	sample, _ := in.Peek(4096)
	out := &entryWriter{w: w.buf, crc: crc32.NewIEEE()}
	var hdr [16]byte
	if _, err := out.Write(entryHeader(&hdr, typ, uint64(size))); err != nil {
		return err
	}
	level := zlib.BestSpeed
	if size < storedBelow || Incompressible(sample) {
		level = zlib.NoCompression
	}
	z, _ := zlib.NewWriterLevel(out, level)
	n, err := io.CopyN(z, in, size)
	if err != nil {
		return fmt.Errorf("%d of the object's %d bytes read: %w", n, size, err)
	}
	if extra, _ := in.Read(make([]byte, 1)); extra != 0 {
		return fmt.Errorf("the object has more than its %d bytes", size)
	}
	for range salt {
		if err := z.Flush(); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	w.record(id, out.crc.Sum32(), out.n)
	return nil
}

// nextSalt is the salt of the next entry (Options.Salt for the first,
// none after), or an error when the pack holds all it was made for.
func (w *Writer) nextSalt() (int, error) {
	if w.count == w.want {
		return 0, errors.New("more objects than the pack was made for")
	}
	if w.count == 0 {
		return w.opts.Salt, nil
	}
	return 0, nil
}

// record notes an entry of n bytes just written at the pack's end for
// the index.
func (w *Writer) record(id [20]byte, crc uint32, n uint64) {
	w.ents = append(w.ents, entry{id: id, off: w.off, crc: crc})
	w.off += n
	w.count++
}

// entryWriter writes one entry through, counting its bytes and their
// CRC-32.
type entryWriter struct {
	w   io.Writer
	crc hash.Hash32
	n   uint64
}

func (e *entryWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	e.crc.Write(p[:n])
	e.n += uint64(n)
	return n, err
}

// AddRaw copies one entry of another pack as it is: raw is its header and
// compressed data, crc their CRC-32 (as that pack's index records it). The
// entry must not be a delta, whose base offset would not hold here.
func (w *Writer) AddRaw(id [20]byte, raw []byte, crc uint32) error {
	if _, err := w.nextSalt(); err != nil { // a copy keeps its bytes, unsalted
		return err
	}
	if len(raw) == 0 {
		return errors.New("an empty entry")
	}
	if typ := raw[0] >> 4 & 7; typ < Commit || typ > Tag {
		return fmt.Errorf("entry type %d is not an object a pack copy can hold", typ)
	}
	if crc32.ChecksumIEEE(raw) != crc {
		return errors.New("the entry does not match its CRC")
	}
	return w.addEntry(id, raw, crc)
}

// addEntry writes one entry whose CRC-32 is crc.
func (w *Writer) addEntry(id [20]byte, raw []byte, crc uint32) error {
	if _, err := w.buf.Write(raw); err != nil {
		return err
	}
	w.record(id, crc, uint64(len(raw)))
	return nil
}

// Finish ends the pack, writes its index, and moves both to their names,
// the index last: git looks for packs through their index, so a reader
// never finds an index without its pack. It returns the pack's name.
func (w *Writer) Finish() (string, error) {
	name, err := w.Seal()
	if err != nil {
		return "", err
	}
	if err := w.Install(); err != nil {
		return "", err
	}
	return name, nil
}

// Seal ends the pack and writes its index, both under temporary names,
// and returns the name Install will give them ("pack-<hex>").
func (w *Writer) Seal() (string, error) {
	if w.uncounted {
		w.want = w.count
	}
	if w.count != w.want {
		w.Abort()
		return "", fmt.Errorf("%d objects added to a pack of %d", w.count, w.want)
	}
	if err := w.buf.Flush(); err != nil {
		w.Abort()
		return "", err
	}
	if w.uncounted {
		if err := w.countAndSum(); err != nil {
			w.Abort()
			return "", err
		}
	}
	packSum := w.sum.Sum(nil)
	if _, err := w.f.Write(packSum); err != nil {
		w.Abort()
		return "", err
	}
	if w.opts.Sync {
		if err := w.f.Sync(); err != nil {
			w.Abort()
			return "", err
		}
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return "", err
	}
	idx, err := w.index(packSum)
	if err != nil {
		os.Remove(w.f.Name())
		return "", err
	}
	w.name, w.packTmp, w.idxTmp = "pack-"+hex.EncodeToString(packSum), w.f.Name(), idx
	return w.name, nil
}

// countAndSum writes an uncounted pack's count into its header and sums
// the whole file into w.sum, the file's offset left at its end.
func (w *Writer) countAndSum() error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], w.count)
	if _, err := w.f.WriteAt(n[:], 8); err != nil {
		return err
	}
	w.sum.Reset()
	if _, err := io.Copy(w.sum, io.NewSectionReader(w.f, 0, int64(w.off))); err != nil {
		return err
	}
	_, err := w.f.Seek(int64(w.off), io.SeekStart)
	return err
}

// Install gives a sealed pack and its index their names, the index last.
func (w *Writer) Install() error {
	base := filepath.Join(w.dir, w.name)
	made, err := install(w.packTmp, base+".pack")
	if err != nil {
		w.Discard()
		return err
	}
	if err := w.point(); err != nil {
		os.Remove(w.idxTmp)
		if made {
			os.Remove(base + ".pack") // no index: no reader has it
		}
		return err
	}
	if _, err := install(w.idxTmp, base+".idx"); err != nil {
		// The index is gone (git prune takes every tmp_* file) or
		// cannot be named: a pack without it is one git never reads.
		os.Remove(w.idxTmp)
		if made {
			os.Remove(base + ".pack")
		}
		return err
	}
	if w.opts.Sync {
		return SyncDir(w.dir)
	}
	return nil
}

func (w *Writer) point() error {
	if w.opts.InstallPoint == "" {
		return nil
	}
	return testhook.Point(w.opts.InstallPoint)
}

// Dir is the folder the pack is written in.
func (w *Writer) Dir() string { return w.dir }

// Name is the sealed pack's name, pack-<hex>.
func (w *Writer) Name() string { return w.name }

// TempGone says whether a temporary file of the sealed pack is gone
// before Install gave it its name: git prune deletes objects/pack/tmp_*
// files it finds old enough, all of them with --expire=now.
func (w *Writer) TempGone() bool {
	for _, p := range []string{w.packTmp, w.idxTmp} {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	return false
}

// Exists says whether a pack of the sealed pack's name is in its folder
// already, as its pack or its index. A pack is named by its bytes: an
// earlier one of the same objects has this name, and Install would keep
// it instead, whatever deletes it next.
func (w *Writer) Exists() bool {
	for _, ext := range []string{".pack", ".idx"} {
		if _, err := os.Lstat(filepath.Join(w.dir, w.name+ext)); !errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	return false
}

// Discard removes a sealed pack's temporary files.
func (w *Writer) Discard() {
	os.Remove(w.packTmp)
	os.Remove(w.idxTmp)
}

// Abort removes the unfinished pack.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// SyncDir fsyncs a folder, so that the names made or removed in it last.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// index writes the version 2 index of the pack to a temporary file.
func (w *Writer) index(packSum []byte) (string, error) {
	sort.Slice(w.ents, func(i, j int) bool { return bytes.Compare(w.ents[i].id[:], w.ents[j].id[:]) < 0 })
	f, err := os.CreateTemp(w.dir, strings.Replace(w.opts.Prefix, "pack", "idx", 1))
	if err != nil {
		return "", err
	}
	sum := sha1.New()
	out := bufio.NewWriterSize(io.MultiWriter(f, sum), 64<<10)
	put32 := func(v uint32) {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		out.Write(b[:])
	}
	out.Write([]byte{0xff, 't', 'O', 'c'})
	put32(2)
	// Fan-out: how many ids start with a byte at most i.
	var fan [256]uint32
	for _, e := range w.ents {
		fan[e.id[0]]++
	}
	var total uint32
	for i := range fan {
		total += fan[i]
		put32(total)
	}
	for _, e := range w.ents {
		out.Write(e.id[:])
	}
	for _, e := range w.ents {
		put32(e.crc)
	}
	var large []uint64
	for _, e := range w.ents {
		if e.off < 1<<31 {
			put32(uint32(e.off))
			continue
		}
		put32(1<<31 | uint32(len(large)))
		large = append(large, e.off)
	}
	for _, off := range large {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], off)
		out.Write(b[:])
	}
	out.Write(packSum)
	err = out.Flush()
	if err == nil {
		_, err = f.Write(sum.Sum(nil))
	}
	if err == nil && w.opts.Sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// install gives a finished file git's read-only mode, as core.sharedRepository
// narrows it (0440 under an octal 0640, as git's finish_tmp_packfile), and
// its name, and says whether it made the name. A pack of that name already
// there holds the same objects (its name is the hash of its contents), and
// is kept.
func install(tmp, final string) (bool, error) {
	if err := os.Chmod(tmp, 0o444); err != nil {
		return false, err
	}
	if err := statefile.AdjustShared(tmp); err != nil {
		return false, err
	}
	if _, err := os.Stat(final); err == nil {
		return false, os.Remove(tmp)
	}
	return true, os.Rename(tmp, final)
}
