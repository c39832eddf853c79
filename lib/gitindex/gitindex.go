// Package gitindex reads the few facts a capture needs from a git index file
// (format versions 2 to 4): which entries are assume-unchanged, skip-worktree
// or sparse directories, and their sizes. libgit2 1.5 through git2go v34
// exposes no entry flags, and `git ls-files -v` costs a process and a full
// listing; this reads the file directly and falls back to git for a split
// index, whose entries live in a second file.
package gitindex

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// Entry is what a capture needs of one index entry.
type Entry struct {
	Path         string
	Oid          [20]byte
	Mode         uint32
	Size         uint32
	Stage        int
	AssumeValid  bool
	SkipWorktree bool
	IntentToAdd  bool
	SparseDir    bool // a sparse-index directory entry (mode 040000)
}

// Index is the parsed summary of one index file.
type Index struct {
	Version int
	// Flagged are the entries with assume-unchanged, skip-worktree or
	// intent-to-add set, sparse directories and gitlinks: the only ones
	// captures treat specially. Other entries are counted, not kept.
	Flagged []Entry
	Count   int
	// Content is a digest of every entry's path, mode, object id, stage
	// and flags, leaving out stat data: two indexes with the same Content
	// record the same files, however git refreshed them.
	Content string
}

// ErrSplit says the index is split; its entries must be read through git.
var ErrSplit = errors.New("split index")

// Read parses the index file at path. A missing file is an empty index.
//
// The file is mapped, not read: a 100,000-file index is 10 MB, and copying
// it into fresh memory cost five times the parse (65 against 12 ms). git
// replaces an index by renaming a new file over it and never writes into
// one, so the mapping stays whole; should the file shrink under it all the
// same, the fault is caught and the file read the plain way.
func Read(path string) (*Index, error) {
	data, _, err := mapIndex(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Index{}, nil
	}
	if errors.Is(err, errNotMapped) {
		return readCopy(path)
	}
	if err != nil {
		return nil, err
	}
	defer syscall.Munmap(data)
	return parseMapped(data, path)
}

// errNotMapped: the file could not be mapped (too small to be an index,
// too large, or the mapping failed).
var errNotMapped = errors.New("the index could not be mapped")

// mapIndex maps the index file at path, read-only.
func mapIndex(path string) ([]byte, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() < 12+20 || fi.Size() >= 1<<32 {
		return nil, fi, errNotMapped
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fi, errNotMapped
	}
	return data, fi, nil
}

// parseMapped is Parse of a mapping, read again by readCopy when the
// mapping faults. Parse keeps nothing of data.
func parseMapped(data []byte, path string) (ix *Index, err error) {
	if fault := catchFault(data, func() { ix, err = Parse(data) }); fault != nil {
		return readCopy(path)
	}
	return ix, err
}

// ErrFault says a mapped index faulted while read: another process cut the
// file short in place (git and git-venom replace an index by rename, never
// in place), and the pages past its new end are gone from the mapping.
var ErrFault = errors.New("the mapped index was cut short while read")

// catchFault runs fn, turning a memory fault inside the mapping data into
// ErrFault. A fault anywhere else is a defect, not a file cut short: it
// panics on. The catch holds for the calling goroutine only
// (debug.SetPanicOnFault): one fn starts must catch its own.
func catchFault(data []byte, fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			f, fault := r.(interface{ Addr() uintptr })
			if !fault || len(data) == 0 {
				panic(r)
			}
			start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
			if a := f.Addr(); a < start || a-start >= uintptr(len(data)) {
				panic(r)
			}
			err = ErrFault
		}
	}()
	fn()
	return nil
}

func readCopy(path string) (*Index, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Index{}, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse parses index bytes.
func Parse(data []byte) (*Index, error) {
	ix := &Index{}
	digest := sha1.New()
	version, err := decode(data, func(r *rawEntry) {
		digest.Write(r.meta[:])
		digest.Write(r.path)
		e := r.entry(false)
		if e.AssumeValid || e.SkipWorktree || e.IntentToAdd || e.SparseDir || e.Mode == 0o160000 {
			e.Path = string(r.path)
			ix.Flagged = append(ix.Flagged, e)
		}
		ix.Count++
	}, func(sig string, _ []byte) {
		if sig == "sdir" {
			digest.Write([]byte("sdir"))
		}
	})
	if err != nil {
		return nil, err
	}
	ix.Version = version
	ix.Content = hex.EncodeToString(digest.Sum(nil))
	return ix, nil
}

// rawEntry is one entry as decode finds it; path and stat point into the
// index bytes and live only for the call.
type rawEntry struct {
	stat  []byte // the 40 bytes of cached stat data, mode included
	oid   []byte
	flags uint16
	ext   uint16
	path  []byte
	// meta is what Content digests of the entry besides its path: mode,
	// object id, the stage and flag bits, the extended flags, path length.
	meta [30]byte
}

func (r *rawEntry) entry(withPath bool) Entry {
	mode := binary.BigEndian.Uint32(r.stat[24:28])
	e := Entry{Mode: mode, Size: binary.BigEndian.Uint32(r.stat[36:40]), Stage: int(r.flags>>12) & 3,
		AssumeValid: r.flags&0x8000 != 0, SkipWorktree: r.ext&0x4000 != 0, IntentToAdd: r.ext&0x2000 != 0,
		SparseDir: mode == 0o040000}
	copy(e.Oid[:], r.oid)
	if withPath {
		e.Path = string(r.path)
	}
	return e
}

// decode walks the entries of index bytes, then names each extension
// (with its bytes, header included); it returns the index version. A split
// index gives ErrSplit.
func decode(data []byte, each func(*rawEntry), ext func(sig string, b []byte)) (int, error) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return 0, fmt.Errorf("not a git index")
	}
	version := int(binary.BigEndian.Uint32(data[4:8]))
	if version < 2 || version > 4 {
		return 0, fmt.Errorf("index version %d is not supported", version)
	}
	n := int(binary.BigEndian.Uint32(data[8:12]))
	body := data[:len(data)-20]
	off := 12
	var prev []byte
	var r rawEntry
	for i := 0; i < n; i++ {
		if off+62 > len(body) {
			return 0, fmt.Errorf("index truncated at entry %d", i)
		}
		start := off
		r.stat = body[start : start+40]
		r.oid = body[start+40 : start+60]
		r.flags = binary.BigEndian.Uint16(body[off+60 : off+62])
		off += 62
		r.ext = 0
		if r.flags&0x4000 != 0 {
			if version < 3 || off+2 > len(body) {
				return 0, fmt.Errorf("bad extended flags at entry %d", i)
			}
			r.ext = binary.BigEndian.Uint16(body[off : off+2])
			off += 2
		}
		var path []byte
		if version == 4 {
			strip, w := varint(body[off:])
			if w == 0 || strip > len(prev) {
				return 0, fmt.Errorf("bad path prefix at entry %d", i)
			}
			off += w
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return 0, fmt.Errorf("unterminated path at entry %d", i)
			}
			path = append(append([]byte{}, prev[:len(prev)-strip]...), body[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return 0, fmt.Errorf("unterminated path at entry %d", i)
			}
			path = body[off : off+end]
			// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
			entryLen := (off + end - start + 8) &^ 7
			off = start + entryLen
		}
		prev = path
		r.path = path
		copy(r.meta[:4], r.stat[24:28])
		copy(r.meta[4:24], r.oid)
		binary.BigEndian.PutUint16(r.meta[24:26], r.flags&0xf000)
		binary.BigEndian.PutUint16(r.meta[26:28], r.ext)
		binary.BigEndian.PutUint16(r.meta[28:30], uint16(len(path)))
		each(&r)
	}
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if sig == "link" {
			return 0, ErrSplit
		}
		if off+8+size > len(body) {
			return 0, fmt.Errorf("index extension %q truncated", sig)
		}
		if ext != nil {
			ext(sig, body[off:off+8+size])
		}
		off += 8 + size
	}
	return version, nil
}

// varint decodes git's offset encoding of index v4 path prefixes.
func varint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := int(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) {
			return 0, 0
		}
		c = b[i]
		i++
		val = ((val + 1) << 7) + int(c&127)
	}
	return val, i
}
