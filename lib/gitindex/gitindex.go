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
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Index{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < 12+20 || fi.Size() != int64(int(fi.Size())) {
		return readCopy(path)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readCopy(path)
	}
	defer syscall.Munmap(data)
	return parseMapped(data, path)
}

// parseMapped is Parse of a mapping, read again by readCopy when the
// mapping faults. Parse keeps nothing of data.
func parseMapped(data []byte, path string) (ix *Index, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			ix, err = readCopy(path)
		}
	}()
	return Parse(data)
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
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, fmt.Errorf("not a git index")
	}
	ix := &Index{Version: int(binary.BigEndian.Uint32(data[4:8]))}
	if ix.Version < 2 || ix.Version > 4 {
		return nil, fmt.Errorf("index version %d is not supported", ix.Version)
	}
	n := int(binary.BigEndian.Uint32(data[8:12]))
	body := data[:len(data)-20]
	off := 12
	var prev []byte
	digest := sha1.New()
	for i := 0; i < n; i++ {
		if off+62 > len(body) {
			return nil, fmt.Errorf("index truncated at entry %d", i)
		}
		start := off
		mode := binary.BigEndian.Uint32(body[off+24 : off+28])
		size := binary.BigEndian.Uint32(body[off+36 : off+40])
		flags := binary.BigEndian.Uint16(body[off+60 : off+62])
		off += 62
		var ext uint16
		if flags&0x4000 != 0 {
			if ix.Version < 3 || off+2 > len(body) {
				return nil, fmt.Errorf("bad extended flags at entry %d", i)
			}
			ext = binary.BigEndian.Uint16(body[off : off+2])
			off += 2
		}
		var path []byte
		if ix.Version == 4 {
			strip, w := varint(body[off:])
			if w == 0 || strip > len(prev) {
				return nil, fmt.Errorf("bad path prefix at entry %d", i)
			}
			off += w
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, fmt.Errorf("unterminated path at entry %d", i)
			}
			path = append(append([]byte{}, prev[:len(prev)-strip]...), body[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, fmt.Errorf("unterminated path at entry %d", i)
			}
			path = body[off : off+end]
			// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
			entryLen := (off + end - start + 8) &^ 7
			off = start + entryLen
		}
		prev = path
		var meta [30]byte
		copy(meta[:4], body[start+24:start+28])
		copy(meta[4:24], body[start+40:start+60])
		binary.BigEndian.PutUint16(meta[24:26], flags&0xf000)
		binary.BigEndian.PutUint16(meta[26:28], ext)
		binary.BigEndian.PutUint16(meta[28:30], uint16(len(path)))
		digest.Write(meta[:])
		digest.Write(path)
		e := Entry{Mode: mode, Size: size, Stage: int(flags>>12) & 3,
			AssumeValid: flags&0x8000 != 0, SkipWorktree: ext&0x4000 != 0, IntentToAdd: ext&0x2000 != 0,
			SparseDir: mode == 0o040000}
		copy(e.Oid[:], body[start+40:start+60])
		if e.AssumeValid || e.SkipWorktree || e.IntentToAdd || e.SparseDir || e.Mode == 0o160000 {
			e.Path = string(path)
			ix.Flagged = append(ix.Flagged, e)
		}
		ix.Count++
	}
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if sig == "link" {
			return nil, ErrSplit
		}
		if sig == "sdir" {
			digest.Write([]byte("sdir"))
		}
		off += 8 + size
	}
	ix.Content = hex.EncodeToString(digest.Sum(nil))
	return ix, nil
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
