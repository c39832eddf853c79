// Package journal is log.jsonl, the truth of a repository's venom state
// (docs/checkpoints.md#the-log, docs/checkpoints.md#the-log): one JSON object a line, seq 1, 2, 3, ... without
// gaps, appended under the lock, one write a record, flushed to disk before
// the command reports success. A torn last line left by a crash is ignored
// when read and cut off by the next writer; any other damage is reported
// with its line number (damage.go) and never cut or rewritten.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// TimeFormat is the log's time format: UTC, milliseconds, Z.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Now is the clock, a seam for tests.
var Now = func() time.Time { return time.Now().UTC() }

// Stamp formats t in the log's format.
func Stamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Log is the loaded journal of one repository.
type Log struct {
	path string
	// Entries are the records, when the log was read by Load; Scan keeps
	// none (its caller folds them as they come).
	Entries []Entry
	// valid is the length of the file up to the end of its last whole line;
	// anything after it is a torn tail.
	valid int64
	size  int64
	last  int64 // seq of the last record taken
	// high is the highest seq any line claims, damaged ones included: a
	// writer goes on above it, so no two lines ever claim one seq.
	high int64
	// damage is the damaged lines the read found (the first maxDamage),
	// damaged how many there are.
	damage  []Damage
	damaged int
	keep    bool // Entries holds every record (Load), so Append adds to it
	// lines is how many whole lines end at or before valid, since how many
	// unreadable or incomplete lines follow the last record taken: what a
	// scan resumed at valid starts from (Resume).
	lines, since int64
}

// Load reads the journal at path and keeps every record. A missing file is
// an empty journal.
func Load(path string) (*Log, error) {
	var entries []Entry
	l, err := Scan(path, func(e *Entry) { entries = append(entries, *e) })
	if err != nil {
		return nil, err
	}
	l.Entries, l.keep = entries, true
	return l, nil
}

// Scan reads the journal at path and calls each with every record in seq
// order, one at a time through one scanChunk buffer, not the whole log (on
// 10,000 records, 1.8 MB and a fifth of a list's time). The record passed
// to each is reused for the next, so each copies what it keeps. A missing
// file is an empty journal. A line that is not a record, or whose seq
// repeats, goes back or skips, is damage (Log.Damage); the whole records in
// order are still passed on, so a command can go on with what it spares.
func Scan(path string, each func(*Entry)) (*Log, error) { return ScanWith(path, ScanOptions{}, each) }

// ScanOptions narrow what Scan decodes.
type ScanOptions struct {
	// Agent, when set, skips undecoded every line without "agent":"<Agent>"
	// (every record names its agent; ids need no escape), so a read costs
	// that agent's records. Skipped lines are checked by head and end only:
	// damage inside another agent's record shows in a full read (doctor's).
	Agent string
	// LazyRepos keeps each checkpoint.taken's repos as text in ReposJSON,
	// for DecodeRepos: a fold needs them only for the checkpoints still
	// live at its end, and most of a long log's are pruned by then.
	LazyRepos bool
}

// ScanWith is Scan with options.
func ScanWith(path string, o ScanOptions, each func(*Entry)) (*Log, error) {
	return scanFrom(path, nil, o, each)
}

// scanFrom is ScanWith from the start of the file, or, with from, from the
// point a Resume marks, once the file's bytes there are checked to be the
// ones it was made from (ErrResumeMismatch when not: the caller reads the
// whole log instead).
func scanFrom(path string, from *Resume, o ScanOptions, each func(*Entry)) (*Log, error) {
	var mark []byte
	if o.Agent != "" {
		mark = []byte(`"agent":"` + o.Agent + `"`)
	}
	l := &Log{path: path}
	// No link is followed to the log, and a FIFO or device is refused
	// (statefile): what is read as the truth is the state folder's own file.
	f, err := statefile.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		if from != nil && from.Offset > 0 {
			return nil, ErrResumeMismatch
		}
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var check order
	if from != nil {
		if err := from.matches(f); err != nil {
			return nil, err
		}
		check = from.order()
		l.valid = from.Offset
		if _, err := f.Seek(from.Offset, io.SeekStart); err != nil {
			return nil, err
		}
	}
	// Decoding is half of a fold's work, so it runs on a goroutine of its
	// own, a few batches of records ahead of each: on two cores a 10,000
	// record fold takes the time of the slower half, not of both. The
	// batches go round between the two, never more than scanBatches.
	full := make(chan []Entry, scanBatches)
	free := make(chan []Entry, scanBatches)
	for i := 0; i < scanBatches; i++ {
		free <- make([]Entry, 0, scanBatch)
	}
	var size int64
	var readErr error
	go func() {
		defer close(full)
		syms := newSymbols()
		batch := <-free
		overlong := func(n int64) {
			l.valid += n
			check.next()
			check.broken(LineUnreadable, 0, fmt.Sprintf("is longer than %d bytes", maxLine))
		}
		size, readErr = eachLine(f, overlong, func(line []byte) {
			l.valid += int64(len(line))
			check.next()
			line = line[:len(line)-1]
			if len(bytes.TrimSpace(line)) == 0 {
				return
			}
			if mark != nil && !bytes.Contains(line, mark) {
				otherAgent(&check, line, syms)
				return
			}
			batch = append(batch, Entry{})
			e := &batch[len(batch)-1]
			if !check.decoded(line, e, decodeOwned(line, e, syms, o.LazyRepos)) {
				// A line that is not a record in order is damage, not truth.
				batch = batch[:len(batch)-1]
				return
			}
			if len(batch) == scanBatch {
				full <- batch
				batch = (<-free)[:0]
			}
		})
		if len(batch) > 0 {
			full <- batch
		}
		l.last, l.high, l.damage, l.damaged = check.last, check.high, check.damage, check.count
		l.lines, l.since = check.line, check.since
	}()
	for batch := range full {
		for i := range batch {
			each(&batch[i])
		}
		free <- batch
	}
	// full is closed: the goroutine's writes to l, size and readErr are seen.
	l.size = size
	if from != nil {
		l.size += from.Offset
	}
	if readErr != nil {
		return nil, readErr
	}
	return l, nil
}

// otherAgent checks a line a scan of one agent skips: by the head and the
// end every writer gives a record when it has them, which costs next to
// nothing, else by decoding it.
func otherAgent(check *order, line []byte, syms *symbols) {
	if seq, typ, ok := peek(line); ok && seq > 0 && typ != "" && line[len(line)-1] == '}' {
		check.inOrder(seq)
		return
	}
	var e Entry
	check.decoded(line, &e, decodeOwned(line, &e, syms, true))
}

// scanBatches batches of scanBatch records are what Scan's decoder may be
// ahead of its caller.
const (
	scanBatches = 3
	scanBatch   = 128
)

// eachLine reads r through one buffer of scanChunk bytes (grown for a
// longer line, up to maxLine) and calls fn with every whole line, its '\n'
// included; the bytes are fn's only until it returns. A whole line longer
// than maxLine is passed over unread, and overlong gets its length. It
// returns how many bytes it read, a partial last line included.
func eachLine(r io.Reader, overlong func(n int64), fn func(line []byte)) (int64, error) {
	buf := make([]byte, scanChunk)
	var read int64
	held := 0        // bytes of a partial line at the start of buf
	var passed int64 // bytes of an overlong line passed over so far, when > 0
	for {
		n, err := r.Read(buf[held:])
		read += int64(n)
		data := buf[:held+n]
		done := 0
		if passed > 0 {
			if i := bytes.IndexByte(data, '\n'); i < 0 {
				passed += int64(len(data))
				done = len(data)
			} else {
				overlong(passed + int64(i) + 1)
				passed, done = 0, i+1
			}
		}
		for passed == 0 {
			i := bytes.IndexByte(data[done:], '\n')
			if i < 0 {
				break
			}
			fn(data[done : done+i+1])
			done += i + 1
		}
		held = copy(buf, data[done:])
		if err == io.EOF {
			return read, nil
		}
		if err != nil {
			return read, err
		}
		if held == len(buf) {
			if len(buf) >= maxLine {
				// No record is this long: what a crash on some file
				// systems leaves (NULs), or what someone put there. Held
				// whole, it would cost its size in memory, a gigabyte
				// for a sparse gigabyte.
				passed, held = int64(held), 0
			} else {
				// One line longer than the buffer: a bigger one.
				buf = append(buf, make([]byte, len(buf))...)
			}
		}
	}
}

// scanChunk is the size of Scan's buffer, which grows for a longer line.
const scanChunk = 64 << 10

// maxLine is the longest line a read holds, 64 MiB with its newline: a
// checkpoint record that lists 100,000 skipped files is a few MB. A var,
// for tests.
var maxLine = 64 << 20

// Path is the journal's file.
func (l *Log) Path() string { return l.path }

// LastSeq is the seq of the last record, 0 when there is none.
func (l *Log) LastSeq() int64 { return l.last }

// Damage is the log's damaged lines, in file order: the first twenty.
func (l *Log) Damage() []Damage { return l.damage }

// Damaged counts the log's damaged lines; a torn tail is not one.
func (l *Log) Damaged() int { return l.damaged }

// Torn reports whether the file ends in a partial line.
func (l *Log) Torn() bool { return l.size > l.valid }

// Append writes one record: seq, ts and type, then the members of payload, in
// one write, then fsync. The caller holds the lock.
func (l *Log) Append(typ string, payload any) (Entry, error) {
	// Above every seq a line claims, damaged ones included: seq stays
	// monotonic in the file whatever the damage.
	seq := max(l.last, l.high) + 1
	if seq < 1 {
		return Entry{}, fmt.Errorf("log.jsonl claims seq %d, the last there can be", l.high)
	}
	ts := Stamp(Now())
	line, err := encode(seq, ts, typ, payload)
	if err != nil {
		return Entry{}, err
	}
	if err := testhook.Point("log-append"); err != nil {
		return Entry{}, err
	}
	// Opened link-free and only if regular (statefile): a torn tail is cut,
	// and a record appended, in the state folder's own file, never in one
	// a planted link or FIFO leads to.
	f, err := statefile.Open(l.path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	// Cut a torn tail: the file is re-measured, since it is the truth, not
	// what this process read before it held the lock.
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return Entry{}, err
	}
	if end != l.valid {
		if end < l.valid {
			return Entry{}, fmt.Errorf("log.jsonl shrank from %d to %d bytes while held", l.valid, end)
		}
		if err := f.Truncate(l.valid); err != nil {
			return Entry{}, err
		}
	}
	if _, err := f.WriteAt(line, l.valid); err != nil {
		// Leave no partial line behind.
		_ = f.Truncate(l.valid)
		return Entry{}, err
	}
	if err := testhook.Point("log-fsync"); err != nil {
		_ = f.Truncate(l.valid)
		return Entry{}, err
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(l.valid)
		return Entry{}, err
	}
	var e Entry
	_ = decode(line, &e)
	l.valid += int64(len(line))
	l.size = l.valid
	l.last, l.high = seq, seq
	l.lines, l.since = l.lines+1, 0
	if l.keep {
		l.Entries = append(l.Entries, e)
	}
	return e, nil
}

// encode renders {"seq":..,"ts":..,"type":..,<payload members>}\n.
func encode(seq int64, ts, typ string, payload any) ([]byte, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("journal payload of %s is not an object", typ)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"seq":%d,"ts":%q,"type":%q`, seq, ts, typ)
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1 : len(body)-1])
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// Cut removes a torn tail without adding a record (doctor's fix).
func (l *Log) Cut() error {
	if !l.Torn() {
		return nil
	}
	f, err := statefile.Open(l.path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(l.valid)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	l.size = l.valid
	return nil
}
