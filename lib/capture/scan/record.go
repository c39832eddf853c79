package scan

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// The scan record is read on every capture and is as large as the tree has
// folders, so it is kept in a compact binary form rather than JSON: a
// 1,300-folder record decoded in ~5 ms as JSON, which was a tenth of a
// clean capture. Layout: "VSR", the format byte, then each field in order,
// strings and lists length-prefixed with uvarints, numbers as varints.

var errBadRecord = errors.New("the scan record is damaged")

func (rec *Record) encode() []byte {
	// Sized once, from the strings and a bound on each number's varint.
	size := 64 + len(rec.Members) + len(rec.Settings)
	for _, s := range rec.Excludes {
		size += len(s) + 10
	}
	for _, s := range rec.Untracked {
		size += len(s) + 10
	}
	for _, list := range [][]dirState{rec.Dirs, rec.Ignores} {
		for _, d := range list {
			size += len(d.Path) + len(d.Sum) + 80
		}
	}
	b := append(make([]byte, 0, size), 'V', 'S', 'R', recordFormat)
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
		}
	}
	strs := func(list []string) {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			str(s)
		}
	}
	str(rec.Members)
	str(rec.Settings)
	strs(rec.Excludes)
	num(int64(rec.Failed))
	b = append(b, boolByte(rec.Dirs != nil))
	states(rec.Dirs)
	strs(rec.Untracked)
	states(rec.Ignores)
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// decodeRecord reads a record; its strings share b, which must not change
// after.
func decodeRecord(b []byte) (*Record, error) {
	if len(b) < 4 || string(b[:3]) != "VSR" || b[3] != recordFormat {
		return nil, errBadRecord
	}
	b = b[4:]
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
	count := func() int {
		n := uv()
		if n > uint64(len(b)) { // every item takes at least a byte
			bad = true
			return 0
		}
		return int(n)
	}
	states := func() []dirState {
		n := count()
		list := make([]dirState, 0, n)
		for i := 0; i < n && !bad; i++ {
			d := dirState{Path: str()}
			d.Stat = fsStat{Mtime: num(), Ctime: num(), Ino: uint64(num()), Size: num(), Mode: uint32(num())}
			d.Listed = num()
			d.Sum = str()
			list = append(list, d)
		}
		return list
	}
	strs := func() []string {
		n := count()
		list := make([]string, 0, n)
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
	rec.Dirs = states()
	if !hasDirs {
		rec.Dirs = nil
	}
	rec.Untracked = strs()
	rec.Ignores = states()
	if bad || len(b) != 0 {
		return nil, errBadRecord
	}
	return rec, nil
}
