package private

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/treepath"
)

// A listing is what one scan listed, path by path, with each path's lstat:
// the memo's key taken apart. A later scan whose listing differs in a few
// paths has the memo's tree with only those paths edited (the capture's
// carry, lib/capture/carry.go), where the memo alone would store every
// listed path again: a tree with 300,000 untracked files, one of them
// edited, hashed all 300,000 at every capture.
//
// Layout: "VML", the format byte, then one record per path in byte order
// of the paths, each: uvarint length of the prefix shared with the path
// before, uvarint length of the rest and the rest (git's index v4 way:
// most of a path is its folder's), a kind byte, then for a file its
// st_mode and size as uvarints, and as signed varints its mtime (ns) less
// the file before's, its ctime less its mtime, and its inode and device
// less the file before's: files written together have close times and
// inodes, and 300,000 of them took 11 MB without that, 37 bytes a file.
// It is written beside the private index and named by the memo with its
// digest: a listing that does not match is not used.

const listingFormat = 2

// Kinds of a listed path.
const (
	ListedFile   byte = iota // its stat data vouches for what the memo's tree holds
	ListedAbsent             // gone: the memo's tree does not hold it
	ListedUnsure             // written too recently for its stat data to vouch
)

// Listed is one path of a listing.
type Listed struct {
	Path []byte // valid until the next call to Next
	Kind byte
	Stat scan.Stat // Err unused
}

// Same says whether l vouches for a path whose lstat is now st.
func (l *Listed) Same(st *scan.Stat) bool {
	switch l.Kind {
	case ListedAbsent:
		return st.Err != nil && treepath.Gone(st.Err)
	case ListedFile:
		return st.Err == nil && st.Mode == l.Stat.Mode && st.Size == l.Stat.Size && st.Mtime == l.Stat.Mtime &&
			st.Ctime == l.Stat.Ctime && st.Ino == l.Stat.Ino && st.Dev == l.Stat.Dev
	}
	return false
}

// ListingWriter writes a listing, path by path in byte order.
type ListingWriter struct {
	b    []byte
	last []byte
	prev scan.Stat // the last file's, for the deltas
	bad  bool
}

// NewListingWriter starts a listing of about n paths.
func NewListingWriter(n int) *ListingWriter {
	return &ListingWriter{b: append(make([]byte, 0, 16+n*24), 'V', 'M', 'L', listingFormat)}
}

// NewListingWriterSized starts a listing of about size bytes.
func NewListingWriterSized(size int) *ListingWriter {
	return &ListingWriter{b: append(make([]byte, 0, size), 'V', 'M', 'L', listingFormat)}
}

// Add appends path with its lstat st; recent is the time (unix ns) after
// which stat data cannot vouch for content (git's racy window). Paths must
// come in byte order, each once; otherwise the listing is spoilt.
func (w *ListingWriter) Add(path string, st *scan.Stat, recent int64) {
	if w.bad || len(w.last) > 0 && strings.Compare(string(w.last), path) >= 0 {
		w.bad = true
		return
	}
	w.prefix([]byte(path))
	switch {
	case st.Err != nil && treepath.Gone(st.Err):
		w.b = append(w.b, ListedAbsent)
		return
	case st.Err != nil || !st.IsRegular() && !st.IsLink() || st.Mtime > recent || st.Ctime > recent:
		// Folders (a file replaced by one) and FIFOs are sorted again each
		// time: they cost no read.
		w.b = append(w.b, ListedUnsure)
		return
	}
	w.b = append(w.b, ListedFile)
	w.stat(st)
}

// AddListed appends l, read from another listing, as it was.
func (w *ListingWriter) AddListed(l *Listed) {
	if w.bad || len(w.last) > 0 && bytes.Compare(w.last, l.Path) >= 0 {
		w.bad = true
		return
	}
	w.prefix(l.Path)
	w.b = append(w.b, l.Kind)
	if l.Kind == ListedFile {
		w.stat(&l.Stat)
	}
}

func (w *ListingWriter) prefix(path []byte) {
	shared := 0
	for shared < len(w.last) && shared < len(path) && w.last[shared] == path[shared] {
		shared++
	}
	w.b = binary.AppendUvarint(w.b, uint64(shared))
	w.b = binary.AppendUvarint(w.b, uint64(len(path)-shared))
	w.b = append(w.b, path[shared:]...)
	w.last = append(w.last[:0], path...)
}

func (w *ListingWriter) stat(st *scan.Stat) {
	w.b = binary.AppendUvarint(w.b, uint64(st.Mode))
	w.b = binary.AppendUvarint(w.b, uint64(st.Size))
	w.b = binary.AppendVarint(w.b, st.Mtime-w.prev.Mtime)
	w.b = binary.AppendVarint(w.b, st.Ctime-st.Mtime)
	w.b = binary.AppendVarint(w.b, int64(st.Ino-w.prev.Ino))
	w.b = binary.AppendVarint(w.b, int64(st.Dev-w.prev.Dev))
	w.prev = *st
}

// Bytes is the listing, nil when it was spoilt.
func (w *ListingWriter) Bytes() []byte {
	if w.bad {
		return nil
	}
	return w.b
}

// ListingReader reads a listing back, path by path.
type ListingReader struct {
	b    []byte
	cur  Listed
	prev scan.Stat // the last file's, for the deltas
	err  error
}

var errBadListing = errors.New("the memo's listing is damaged")

// NewListingReader reads data, a listing.
func NewListingReader(data []byte) (*ListingReader, error) {
	if len(data) < 4 || string(data[:3]) != "VML" || data[3] != listingFormat {
		return nil, errBadListing
	}
	return &ListingReader{b: data[4:]}, nil
}

// Next moves to the next path; false at the end or on damage (Err).
func (r *ListingReader) Next() bool {
	if r.err != nil || len(r.b) == 0 {
		return false
	}
	uv := func() uint64 {
		v, n := binary.Uvarint(r.b)
		if n <= 0 {
			r.err = errBadListing
			return 0
		}
		r.b = r.b[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(r.b)
		if n <= 0 {
			r.err = errBadListing
			return 0
		}
		r.b = r.b[n:]
		return v
	}
	shared, rest := uv(), uv()
	if r.err != nil || shared > uint64(len(r.cur.Path)) || rest > uint64(len(r.b)) || len(r.b) == int(rest) {
		r.err = errBadListing
		return false
	}
	r.cur.Path = append(r.cur.Path[:shared], r.b[:rest]...)
	r.b = r.b[rest:]
	r.cur.Kind = r.b[0]
	r.b = r.b[1:]
	r.cur.Stat = scan.Stat{}
	switch r.cur.Kind {
	case ListedAbsent, ListedUnsure:
	case ListedFile:
		st := &r.cur.Stat
		st.Mode = uint32(uv())
		st.Size = int64(uv())
		st.Mtime = r.prev.Mtime + sv()
		st.Ctime = st.Mtime + sv()
		st.Ino = r.prev.Ino + uint64(sv())
		st.Dev = r.prev.Dev + uint64(sv())
		r.prev = *st
	default:
		r.err = errBadListing
	}
	return r.err == nil
}

// Listed is the current path.
func (r *ListingReader) Listed() *Listed { return &r.cur }

// Err is the damage met, if any.
func (r *ListingReader) Err() error { return r.err }

func listingSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// listingFile is where the memo's listing is kept.
func (p *Index) listingFile() string { return strings.TrimSuffix(p.index, ".index") + ".listing" }

// Listing is the memo's listing, nil when it has none or the file is not
// the one the memo names.
func (p *Index) Listing(m Memo) []byte {
	if m.Listing == "" {
		return nil
	}
	data, err := statefile.ReadFile(p.listingFile())
	if err != nil || !bytes.HasPrefix(data, []byte("VML")) || listingSum(data) != m.Listing {
		return nil
	}
	return data
}
