package scan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"unsafe"

	"github.com/git-venom/git-venom/lib/treepath"
)

// The scan record, read at every capture and as large as the tree has
// folders, is binary, not JSON (which took ~5 ms for 1,300 folders):
// "VSR", a format byte, fields in order (uvarint-prefixed strings and
// lists, varint numbers), the untracked files last as a Paths to the end,
// then a CRC-32C of it all, so a record cut short never reads as fewer files.

var recordCRC = crc32.MakeTable(crc32.Castagnoli)

var errBadRecord = errors.New("the scan record is damaged")

// encode is the record's bytes.
func (rec *Record) encode() []byte {
	var buf bytes.Buffer
	if err := rec.writeTo(&buf); err != nil {
		return nil
	}
	return buf.Bytes()
}

// writeTo writes the record to w a buffer at a time; errBadRecord when
// its untracked paths are out of order.
func (rec *Record) writeTo(out io.Writer) error {
	const chunk = 64 << 10
	sum := crc32.New(recordCRC)
	w := io.MultiWriter(out, sum)
	b := append(make([]byte, 0, chunk+4<<10), 'V', 'S', 'R', recordFormat)
	var err error
	spill := func() {
		if len(b) >= chunk && err == nil {
			_, err = w.Write(b)
			b = b[:0]
		}
	}
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	num := func(n int64) { b = binary.AppendVarint(b, n) }
	states := func(list []dirState) {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, d := range list {
			str(d.Path)
			num(d.Stat.Mtime)
			num(d.Stat.Ctime)
			num(int64(d.Stat.Ino))
			num(d.Stat.Size)
			num(int64(d.Stat.Mode))
			num(d.Listed)
			str(d.Sum)
			spill()
		}
	}
	strs := func(list []string) {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			str(s)
			spill()
		}
	}
	str(rec.Members)
	str(rec.Settings)
	strs(rec.Excludes)
	num(int64(rec.Failed))
	b = append(b, boolByte(rec.Dirs != nil))
	states(rec.Dirs)
	states(rec.Ignores)
	if err != nil {
		return err
	}
	ok, err := rec.Untracked.writeTo(w, b)
	if err == nil && !ok {
		err = errBadRecord
	}
	if err == nil {
		_, err = out.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32()))
	}
	return err
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

const (
	// minStateBytes is the least a folder or ignore file takes in a
	// record: a path's and a digest's lengths and six numbers, a byte each.
	minStateBytes = 8
	// preallocated is the most items a list is made for before they are
	// read: more than a tree's folders as a rule, 80 MiB of folders.
	preallocated = 1 << 20
)

// decodeRecord reads a record; its strings share b, which must not change
// after.
func decodeRecord(b []byte) (*Record, error) {
	if len(b) < 8 || string(b[:3]) != "VSR" || b[3] != recordFormat ||
		crc32.Checksum(b[:len(b)-4], recordCRC) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errBadRecord
	}
	b = b[4 : len(b)-4]
	// The record's strings are substrings of its bytes, which nothing
	// writes after (Load reads them for this alone): a tree of 300,000
	// untracked files made a string for each, then a copy of the whole.
	whole := unsafe.String(unsafe.SliceData(b), len(b))
	size := len(b)
	bad := false
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	num := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	str := func() string {
		n := uv()
		if bad || n > uint64(len(b)) {
			bad = true
			return ""
		}
		off := size - len(b)
		b = b[n:]
		return whole[off : off+int(n)]
	}
	// count reads a list's length. Every item takes at least least bytes
	// of what is left, so a larger count is damage; and the list is made
	// for at most preallocated items, grown by what is really read: a
	// record of 512 MiB of zeros (sparse, nothing on disk) with its
	// checksum right counted as many folders, and the list made for them
	// (40 GiB) ended every capture "fatal error: runtime: out of memory".
	count := func(least int) (n, capacity int) {
		v := uv()
		if v > uint64(len(b)/least) {
			bad = true
			return 0, 0
		}
		return int(v), min(int(v), preallocated)
	}
	// states reads a list of folders or ignore files; sorted: each path
	// after the one before (the folders, which a re-read searches by
	// path); else none empty (ignore files). Either stops a run of zeros
	// at its first or second item.
	states := func(sorted bool) []dirState {
		n, c := count(minStateBytes)
		list := make([]dirState, 0, c)
		for i := 0; i < n && !bad; i++ {
			d := dirState{Path: str()}
			d.Stat = fsStat{Mtime: num(), Ctime: num(), Ino: uint64(num()), Size: num(), Mode: uint32(num())}
			d.Listed = num()
			d.Sum = str()
			if sorted && i > 0 && list[i-1].Path >= d.Path || !sorted && d.Path == "" {
				bad = true
			}
			// A folder or ignore file outside the tree (../x, /x, .git):
			// a folder's stat moved, a quick scan read it again as the
			// tree's and listed its files as untracked.
			if d.Path != "" && treepath.Verify(d.Path) != nil {
				bad = true
			}
			list = append(list, d)
		}
		return list
	}
	strs := func() []string {
		n, c := count(1)
		list := make([]string, 0, c)
		for i := 0; i < n && !bad; i++ {
			list = append(list, str())
		}
		return list
	}
	rec := &Record{Format: recordFormat}
	rec.Members = str()
	rec.Settings = str()
	rec.Excludes = strs()
	rec.Failed = int(num())
	hasDirs := len(b) > 0 && b[0] == 1
	if len(b) > 0 {
		b = b[1:]
	}
	rec.Dirs = states(true)
	if !hasDirs {
		rec.Dirs = nil
	}
	rec.Ignores = states(false)
	// The untracked files stay as they are in b, checked once here.
	if _, ok := checkPaths(b); bad || !ok {
		return nil, errBadRecord
	}
	rec.Untracked = Paths{data: b[:len(b):len(b)]}
	return rec, nil
}
