package scan

import (
	"bytes"
	"encoding/binary"
	"io"
	"unsafe"

	"github.com/git-venom/git-venom/lib/treepath"
)

// Paths is a list of paths in byte order in one buffer, each path stored
// as the prefix length it shares with the one before and the rest (as
// listing.go): 300,000 untracked files took 12 MB as strings, 2.5 MB so.
// A quick scan that read folders again reads the record's list less their
// paths (drop) merged with the ones found (add), never made whole again.
type Paths struct {
	data []byte
	drop map[string]bool // folders whose paths in data are left out
	add  []string        // sorted
}

// Iter reads the paths in order.
func (l Paths) Iter() PathIter { return PathIter{b: l.data, drop: l.drop, add: l.add} }

// Strings is the list as strings, for the few callers that hold them all.
func (l Paths) Strings() []string {
	var list []string
	for it := l.Iter(); it.Next(); {
		list = append(list, string(it.Path()))
	}
	return list
}

// PathIter reads a Paths, path by path.
type PathIter struct {
	b    []byte
	base []byte // data's current path
	has  bool   // base holds a path not yet given
	used bool   // Next gave base: data moves on at the next call
	drop map[string]bool
	add  []string
	k    int
	cur  []byte
}

// nextBase moves base to data's next path not left out.
func (it *PathIter) nextBase() {
	it.has = false
	for len(it.b) > 0 {
		// A Paths is checked whole when it is made or decoded
		// (checkPaths): no damage is met here.
		shared, n := binary.Uvarint(it.b)
		rest, m := binary.Uvarint(it.b[n:])
		it.b = it.b[n+m:]
		it.base = append(it.base[:shared], it.b[:rest]...)
		it.b = it.b[rest:]
		if it.drop == nil || !it.drop[string(it.base[:max(bytes.LastIndexByte(it.base, '/'), 0)])] {
			it.has = true
			return
		}
	}
}

// Next moves to the next path; false at the end.
func (it *PathIter) Next() bool {
	if it.used || it.base == nil && !it.has {
		it.used = false
		if it.base == nil {
			it.base = []byte{}
		}
		it.nextBase()
	}
	switch {
	case it.has && (it.k == len(it.add) || string(it.base) < it.add[it.k]):
		it.cur, it.used = it.base, true
	case it.k < len(it.add):
		a := it.add[it.k]
		it.cur = unsafe.Slice(unsafe.StringData(a), len(a))
		it.k++
	default:
		return false
	}
	return true
}

// Path is the current path, valid until the next call to Next; not to
// be written to.
func (it *PathIter) Path() []byte { return it.cur }

// PathString is the current path as a string sharing Path's memory:
// valid until the next call to Next, and to be cloned to be kept.
func (it *PathIter) PathString() string {
	return unsafe.String(unsafe.SliceData(it.cur), len(it.cur))
}

// appendPath appends p, after last, to b as a Paths holds it.
func appendPath(b, last, p []byte) []byte {
	shared := 0
	for shared < len(last) && shared < len(p) && last[shared] == p[shared] {
		shared++
	}
	b = binary.AppendUvarint(b, uint64(shared))
	b = binary.AppendUvarint(b, uint64(len(p)-shared))
	return append(b, p[shared:]...)
}

// writeTo writes buf, then the list as a Paths's bytes, a buffer at a
// time; false when a path does not come after the one before.
func (l Paths) writeTo(w io.Writer, buf []byte) (bool, error) {
	if l.drop == nil && l.add == nil {
		_, err := w.Write(buf)
		if err == nil {
			_, err = w.Write(l.data)
		}
		return true, err
	}
	var last []byte
	first := true
	for it := l.Iter(); it.Next(); {
		p := it.Path()
		if !first && bytes.Compare(last, p) >= 0 {
			return false, nil
		}
		buf = appendPath(buf, last, p)
		last, first = append(last[:0], p...), false
		if len(buf) >= 64<<10 {
			if _, err := w.Write(buf); err != nil {
				return true, err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(buf)
	return true, err
}

// PathsOf is a Paths of list, which must be sorted and hold each path
// once (ok false otherwise).
func PathsOf(list []string) (Paths, bool) {
	size := 0
	for _, p := range list {
		size += len(p)/4 + 4
	}
	b := make([]byte, 0, size)
	var last []byte
	for i, s := range list {
		p := unsafe.Slice(unsafe.StringData(s), len(s))
		if i > 0 && bytes.Compare(last, p) >= 0 {
			return Paths{}, false
		}
		b = appendPath(b, last, p)
		last = p
	}
	return Paths{data: b}, true
}

// checkPaths says whether data holds paths each after the one before,
// each a path a tree can hold (treepath.Verify), and how many. A record's
// untracked files are taken as they are for the folders a quick scan
// does not read again: a record naming ../x, .git/config or /etc/x had
// the capture stat and store them (it failed at write-tree, every
// capture after it).
func checkPaths(data []byte) (int, bool) {
	var last, cur []byte
	count := 0
	for len(data) > 0 {
		shared, k := binary.Uvarint(data)
		if k <= 0 {
			return 0, false
		}
		data = data[k:]
		rest, k := binary.Uvarint(data)
		if k <= 0 || shared > uint64(len(last)) || rest > uint64(len(data)-k) {
			return 0, false
		}
		data = data[k:]
		cur = append(cur[:0], last[:shared]...)
		cur = append(cur, data[:rest]...)
		data = data[rest:]
		if count > 0 && bytes.Compare(last, cur) >= 0 {
			return 0, false
		}
		// Checked in place: cur is not kept, nor the error naming it.
		if treepath.Verify(unsafe.String(unsafe.SliceData(cur), len(cur))) != nil {
			return 0, false
		}
		last, cur = cur, last
		count++
	}
	return count, true
}
