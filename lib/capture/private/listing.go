package private

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/capture/scan"
	"github.com/git-venom/git-venom/lib/racy"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/treepath"
)

// A listing is what one scan listed, each path with its lstat: the memo's
// key taken apart, so a later scan differing in a few paths edits only
// those into the memo's tree (lib/capture/carry.go) rather than store
// every path again. Layout: "VML", a format byte, then per path in byte
// order its prefix shared with the one before (as index v4), a kind byte,
// and for a file mode, size, and times, inode and device as deltas.

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

// ListingWriter writes a listing, path by path in byte order: into
// memory, or (Index.CreateListing) to a new file beside the memo's a
// buffer at a time, which Index.Remember puts in place.
type ListingWriter struct {
	b    []byte
	last []byte
	prev scan.Stat // the last file's, for the deltas
	bad  bool
	// f is the file written to, tmp its name; sum digests what was
	// written to it.
	f   *os.File
	tmp string
	sum hash.Hash
	err error
}

// listingBuffer is how much a listing written to a file holds before
// writing it out, and how much a reader reads at once.
const listingBuffer = 64 << 10

// NewListingWriter starts a listing of about n paths.
func NewListingWriter(n int) *ListingWriter {
	return &ListingWriter{b: append(make([]byte, 0, 16+n*24), 'V', 'M', 'L', listingFormat)}
}

// NewListingWriterSized starts a listing of about size bytes.
func NewListingWriterSized(size int) *ListingWriter {
	return &ListingWriter{b: append(make([]byte, 0, size), 'V', 'M', 'L', listingFormat)}
}

// Add appends path with its lstat st, taken after the wall-clock time
// taken: a file changed too close to it for its stat data to vouch for
// its content (lib/racy) is listed unsure. Paths must come in byte order,
// each once; otherwise the listing is spoilt.
func (w *ListingWriter) Add(path string, st *scan.Stat, taken time.Time) {
	if w.bad || len(w.last) > 0 && strings.Compare(string(w.last), path) >= 0 {
		w.bad = true
		return
	}
	w.prefix([]byte(path))
	switch {
	case st.Err != nil && treepath.Gone(st.Err):
		w.b = append(w.b, ListedAbsent)
		w.spill()
		return
	case st.Err != nil || !st.IsRegular() && !st.IsLink() || racy.Taken(st.Mtime, st.Ctime, taken):
		// Folders (a file replaced by one) and FIFOs are sorted again each
		// time: they cost no read.
		w.b = append(w.b, ListedUnsure)
		w.spill()
		return
	}
	w.b = append(w.b, ListedFile)
	w.stat(st)
	w.spill()
}

// spill writes out a full buffer to the file, if w writes one.
func (w *ListingWriter) spill() {
	if w.f == nil || len(w.b) < listingBuffer {
		return
	}
	w.flush()
}

func (w *ListingWriter) flush() {
	if w.err == nil {
		w.sum.Write(w.b)
		_, w.err = w.f.Write(w.b)
	}
	w.b = w.b[:0]
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
	w.spill()
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

// Bytes is the listing written to memory, nil when it was spoilt or
// goes to a file.
func (w *ListingWriter) Bytes() []byte {
	if w.bad || w.f != nil {
		return nil
	}
	return w.b
}

// Abandon throws away the file w was writing, if any and not yet put in
// place: the capture that wrote it failed, or kept no listing.
func (w *ListingWriter) Abandon() {
	if w == nil || w.f == nil {
		return
	}
	w.f.Close()
	_ = statefile.Remove(w.tmp)
	w.f = nil
	w.bad = true
}

// ListingReader reads a listing back, path by path: from memory, or
// (Index.OpenListing) from its file a buffer at a time, checking its
// digest on the way: a steady capture of a tree of 300,000 untracked files
// held the memo's listing (7 MB) and the new one whole.
type ListingReader struct {
	b    []byte // what is read and not parsed
	cur  Listed
	prev scan.Stat // the last file's, for the deltas
	err  error
	// src is the file read, buf its buffer, read how much was read of
	// it; sum digests what was read, to compare with want at the end.
	src  io.Reader
	buf  []byte
	eof  bool
	read int64
	sum  hash.Hash
	want string
	f    *os.File
}

var errBadListing = errors.New("the memo's listing is damaged")

// NewListingReader reads data, a listing.
func NewListingReader(data []byte) (*ListingReader, error) {
	if len(data) < 4 || string(data[:3]) != "VML" || data[3] != listingFormat {
		return nil, errBadListing
	}
	return &ListingReader{b: data[4:], eof: true}, nil
}

// newListingReaderFrom reads a listing from src, whose digest must be
// want.
func newListingReaderFrom(src io.Reader, want string) (*ListingReader, error) {
	r := &ListingReader{src: src, buf: make([]byte, 0, listingBuffer), sum: sha256.New(), want: want}
	if !r.fill(4) || string(r.b[:3]) != "VML" || r.b[3] != listingFormat {
		return nil, errBadListing
	}
	r.b = r.b[4:]
	return r, nil
}

// fill makes r.b hold at least n bytes, reading more of the file; false
// when the file ends first.
func (r *ListingReader) fill(n int) bool {
	for len(r.b) < n && !r.eof {
		if n > cap(r.buf) {
			r.buf = make([]byte, 0, n+listingBuffer)
		}
		r.buf = append(r.buf[:0], r.b...)
		k, err := r.src.Read(r.buf[len(r.buf):cap(r.buf)])
		if k > 0 {
			r.sum.Write(r.buf[len(r.buf) : len(r.buf)+k])
			r.read += int64(k)
		}
		r.buf = r.buf[:len(r.buf)+k]
		r.b = r.buf
		switch {
		case r.read > statefile.MaxFile:
			r.err, r.eof = errBadListing, true
		case err == io.EOF:
			r.eof = true
			if hex.EncodeToString(r.sum.Sum(nil)) != r.want {
				r.err = errBadListing
			}
		case err != nil:
			r.err, r.eof = err, true
		}
	}
	return len(r.b) >= n
}

// maxListedHead bounds a listed path's bytes other than its own: two
// uvarints, the kind, two uvarints and four varints.
const maxListedHead = 2*binary.MaxVarintLen64 + 1 + 6*binary.MaxVarintLen64

// Next moves to the next path; false at the end or on damage (Err).
func (r *ListingReader) Next() bool {
	if r.err != nil {
		return false
	}
	r.fill(maxListedHead)
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
	if r.err == nil && rest < statefile.MaxFile {
		r.fill(int(rest) + maxListedHead)
	}
	first := r.cur.Path == nil
	if r.err != nil || shared > uint64(len(r.cur.Path)) || rest > uint64(len(r.b)) || len(r.b) == int(rest) ||
		!first && bytes.Compare(r.b[:rest], r.cur.Path[shared:]) <= 0 {
		// Out of order, or twice (the zeros of a file extended by
		// truncate(2) are the same empty path again and again).
		r.err = errBadListing
		return false
	}
	r.cur.Path = append(r.cur.Path[:shared], r.b[:rest]...)
	if r.cur.Path == nil {
		r.cur.Path = []byte{}
	}
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

// Err is the damage met, if any: a listing read from a file is known
// whole only once Next returned false.
func (r *ListingReader) Err() error { return r.err }

// Close closes the file read, if any.
func (r *ListingReader) Close() {
	if r != nil && r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

func listingSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// listingFile is where the memo's listing is kept.
func (p *Index) listingFile() string { return strings.TrimSuffix(p.index, ".index") + ".listing" }

// OpenListing reads the memo's listing from its file; an error when it
// has none. That the file is the one the memo names (its digest) is
// known at its end: until the reader's Next returned false and its Err
// is nil, nothing read may be acted on.
func (p *Index) OpenListing(m Memo) (*ListingReader, error) {
	if m.Listing == "" {
		return nil, errBadListing
	}
	f, err := statefile.Open(p.listingFile(), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	r, err := newListingReaderFrom(f, m.Listing)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// CreateListing starts a new listing written to a file beside the memo's,
// which Remember puts in place (Abandon, if not).
func (p *Index) CreateListing() (*ListingWriter, error) {
	f, err := statefile.CreateTemp(filepath.Dir(p.listingFile()), "."+filepath.Base(p.listingFile())+".tmp-*")
	if err != nil {
		return nil, err
	}
	w := &ListingWriter{b: append(make([]byte, 0, listingBuffer+1024), 'V', 'M', 'L', listingFormat),
		f: f, tmp: f.Name(), sum: sha256.New()}
	return w, nil
}

// finish writes out the rest of a listing written to a file and closes
// it, and returns its digest.
func (w *ListingWriter) finish() (string, error) {
	if w.bad {
		return "", errBadListing
	}
	w.flush()
	err := w.err
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err != nil {
		_ = statefile.Remove(w.tmp)
		return "", err
	}
	return hex.EncodeToString(w.sum.Sum(nil)), nil
}
