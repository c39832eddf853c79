package journal

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/git-venom/git-venom/lib/statefile"
)

// Tail reads a journal incrementally, for readers that follow it without
// the lock (events --follow). It consumes whole lines only, so a record
// being written, or a torn tail, is never read half; the writer that cuts a
// torn tail cuts only what no reader consumed. Records come out in seq order,
// each once: a seq not above the last one returned is skipped, as Load does.
type Tail struct {
	Path string
	// Want, when set, says which record types to decode; the others are
	// skipped from their first bytes, which is what keeps a filtered read
	// of a long journal fast.
	Want func(typ string) bool

	off      int64  // end of the last consumed line
	lastLine []byte // the last consumed line, to notice a rewritten file
	lastSeq  int64
}

// LastSeq is the seq of the last record seen (returned or skipped by Want).
func (t *Tail) LastSeq() int64 { return t.lastSeq }

// Next returns the records appended since the previous call.
func (t *Tail) Next() ([]Entry, error) {
	var out []Entry
	err := t.Each(func(e *Entry) { out = append(out, *e) })
	return out, err
}

// Each is Next without the slice: it calls each with every record appended
// since the previous call, reusing the record for the next one (each
// copies what it keeps). It reads through one buffer, as Scan does.
func (t *Tail) Each(each func(*Entry)) error {
	f, err := statefile.Open(t.Path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if len(t.lastLine) > 0 {
		start := max(t.off-int64(len(t.lastLine)), 0)
		head := make([]byte, len(t.lastLine))
		_, err := f.ReadAt(head, start)
		if err != nil && err != io.EOF {
			return err
		}
		if err != nil || !bytes.Equal(head, t.lastLine) {
			// The file is not the one read so far (replaced, or cut
			// below what was read): read it again; seq order keeps
			// every record once.
			t.off, t.lastLine = 0, nil
		}
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return err
	}
	syms := newSymbols()
	var e Entry
	overlong := func(n int64) { t.off, t.lastLine = t.off+n, t.lastLine[:0] } // damage, not truth
	_, err = eachLine(f, overlong, func(line []byte) {
		t.off += int64(len(line))
		t.lastLine = append(t.lastLine[:0], line...)
		content := bytes.TrimSpace(line)
		if len(content) == 0 {
			return
		}
		seq, typ, ok := peek(content)
		if ok && (seq <= t.lastSeq || typ == "") {
			return
		}
		if ok && t.Want != nil && !t.Want(typ) {
			t.lastSeq = seq
			return
		}
		e = Entry{}
		if err := decodeOwned(content, &e, syms, false); err != nil || e.Seq <= t.lastSeq || e.Type == "" || e.Ts == "" {
			return // damage, not truth (Scan says which and where)
		}
		t.lastSeq = e.Seq
		if t.Want != nil && !t.Want(e.Type) {
			return
		}
		each(&e)
	})
	return err
}

// peek reads seq and type from the head every writer gives a record,
// {"seq":N,"ts":"...","type":"T", without decoding the line. ok is false
// for any other shape, which then gets a full decode.
func peek(line []byte) (seq int64, typ string, ok bool) {
	seq, rest, ok := headSeq(line)
	if !ok {
		return 0, "", false
	}
	rest, found := bytes.CutPrefix(rest, []byte(`"ts":"`))
	if !found {
		return 0, "", false
	}
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, "", false
	}
	rest, found = bytes.CutPrefix(rest[j+1:], []byte(`,"type":"`))
	if !found {
		return 0, "", false
	}
	k := bytes.IndexByte(rest, '"')
	if k < 0 || bytes.IndexByte(rest[:k], '\\') >= 0 {
		return 0, "", false
	}
	return seq, string(rest[:k]), true
}

// SkipThrough makes the tail return only records after seq.
func (t *Tail) SkipThrough(seq int64) {
	if seq > t.lastSeq {
		t.lastSeq = seq
	}
}
