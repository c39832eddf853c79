package packfile

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/git-venom/git-venom/lib/statefile"
)

// IndexEntry is one object of a pack, as its version 2 index records it.
type IndexEntry struct {
	ID     [20]byte
	Offset uint64
	CRC    uint32
}

// ReadIndex reads a version 2 pack index, checking its own checksum, and
// returns its entries (in id order) and the checksum of the pack it indexes.
func ReadIndex(path string) ([]IndexEntry, [20]byte, error) {
	var packSum [20]byte
	b, err := readRegular(path)
	if err != nil {
		return nil, packSum, err
	}
	bad := func(why string) ([]IndexEntry, [20]byte, error) {
		return nil, packSum, fmt.Errorf("%s: %s", path, why)
	}
	const head = 8 + 256*4
	if len(b) < head+40 || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return bad("not a version 2 pack index")
	}
	sum := sha1.Sum(b[:len(b)-20])
	if !bytes.Equal(sum[:], b[len(b)-20:]) {
		return bad("the index's checksum does not match")
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	ids, crcs, offs := head, head+20*n, head+24*n
	large := head + 28*n
	if n < 0 || large+40 > len(b) {
		return bad("the index is cut short")
	}
	nLarge := (len(b) - 40 - large) / 8
	ents := make([]IndexEntry, n)
	for i := range ents {
		e := &ents[i]
		copy(e.ID[:], b[ids+20*i:])
		e.CRC = binary.BigEndian.Uint32(b[crcs+4*i:])
		off := binary.BigEndian.Uint32(b[offs+4*i:])
		if off&(1<<31) == 0 {
			e.Offset = uint64(off)
			continue
		}
		k := int(off &^ (1 << 31))
		if k >= nLarge {
			return bad("a large offset past the table")
		}
		e.Offset = binary.BigEndian.Uint64(b[large+8*k:])
	}
	copy(packSum[:], b[len(b)-40:])
	return ents, packSum, nil
}

// readRegular reads the regular file at path, never through a link nor
// from a FIFO or a device planted in objects/pack (statefile.OpenRegular),
// up to the size it had when opened.
func readRegular(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, fi.Size()))
}

func openRegular(path string) (*os.File, error) {
	return statefile.OpenRegular(path, os.O_RDONLY, 0, true)
}

// SourceError is a pack Merge cannot copy: not one a Writer wrote (it
// holds deltas, say), or damaged. Nothing was installed.
type SourceError struct {
	Name string // pack-<hex>
	Err  error
}

func (e *SourceError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

// Merge writes one pack into dir holding every object of the packs named
// (pack-<hex>, in dir), each once, each entry copied as it is stored (no
// object is decompressed or hashed again; each entry's CRC is checked).
// The packs must hold no deltas, as this package's never do. The new pack
// is sealed, not installed: the caller records it, then calls Install, or
// Discard. It returns the writer and the number of objects.
func Merge(dir string, names []string, opts Options) (*Writer, int, error) {
	type source struct {
		name string
		path string
		ents []IndexEntry
		ends map[uint64]uint64 // entry offset → end
	}
	var srcs []source
	seen := map[[20]byte]bool{}
	total := 0
	for _, name := range names {
		base := filepath.Join(dir, name)
		ents, packSum, err := ReadIndex(base + ".idx")
		if err != nil {
			return nil, 0, &SourceError{name, err}
		}
		f, err := openRegular(base + ".pack")
		if err != nil {
			return nil, 0, &SourceError{name, err}
		}
		fi, err := f.Stat()
		var tail [20]byte
		if err == nil {
			_, err = f.ReadAt(tail[:], fi.Size()-20)
		}
		f.Close()
		if err != nil {
			return nil, 0, &SourceError{name, err}
		}
		if tail != packSum {
			return nil, 0, &SourceError{name, fmt.Errorf("%s.pack is not the pack its index describes", base)}
		}
		// Each entry ends where the next begins, the last at the checksum.
		offs := make([]uint64, len(ents))
		for i, e := range ents {
			offs[i] = e.Offset
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		ends := make(map[uint64]uint64, len(offs))
		for i, o := range offs {
			end := uint64(fi.Size() - 20)
			if i+1 < len(offs) {
				end = offs[i+1]
			}
			if o < 12 || end <= o {
				return nil, 0, &SourceError{name, fmt.Errorf("%s.idx: an entry outside its pack", base)}
			}
			ends[o] = end
		}
		var keep []IndexEntry
		for _, e := range ents {
			if !seen[e.ID] {
				seen[e.ID] = true
				keep = append(keep, e)
			}
		}
		sort.Slice(keep, func(i, j int) bool { return keep[i].Offset < keep[j].Offset })
		srcs = append(srcs, source{name: name, path: base + ".pack", ents: keep, ends: ends})
		total += len(keep)
	}
	if total == 0 {
		return nil, 0, errors.New("no objects to merge")
	}
	w, err := CreateWith(dir, total, opts)
	if err != nil {
		return nil, 0, err
	}
	var buf []byte
	for _, s := range srcs {
		f, err := openRegular(s.path)
		if err != nil {
			w.Abort()
			return nil, 0, &SourceError{s.name, err}
		}
		for _, e := range s.ents {
			n := int(s.ends[e.Offset] - e.Offset)
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if _, err = f.ReadAt(buf, int64(e.Offset)); err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if err == nil {
				err = w.AddRaw(e.ID, buf, e.CRC)
			}
			if err != nil {
				f.Close()
				w.Abort()
				return nil, 0, &SourceError{s.name, fmt.Errorf("%s: %w", s.path, err)}
			}
		}
		f.Close()
	}
	if _, err := w.Seal(); err != nil {
		return nil, 0, err
	}
	return w, total, nil
}
