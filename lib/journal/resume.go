package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"

	"github.com/git-venom/git-venom/lib/statefile"
)

// Resume marks a point of the log that a read can start from instead of
// the first line: a whole-line boundary, what the read of the lines before
// it found (the last seq, the highest seq claimed, the damage), and a
// fingerprint of the bytes before it, so that a log rewritten, cut or
// replaced beneath the mark is noticed and read whole again. The fold
// snapshot (lib/state) keeps one beside the fold it made.
type Resume struct {
	Offset int64 `json:"offset"` // bytes before the mark, ending in a newline
	Lines  int64 `json:"lines"`  // whole lines before it, blank and damaged ones included
	Last   int64 `json:"last"`   // seq of the last record taken
	High   int64 `json:"high"`   // the highest seq a line claims
	Since  int64 `json:"since"`  // unreadable or incomplete lines after the last record
	// Damage and Damaged are the damaged lines before the mark (the first
	// twenty, and how many), so that a damaged log stays damaged to every
	// reader (state.Intact) however it is read.
	Damage  []Damage `json:"damage"`
	Damaged int      `json:"damaged"`
	// Head and Tail are the sha256 of the first and the last fingerprintBytes
	// bytes before Offset (fewer when the log is shorter): the tail holds the
	// last records whole, so a log rewritten beneath the mark, cut short or
	// replaced by another does not match.
	Head string `json:"head"`
	Tail string `json:"tail"`
}

// ErrResumeMismatch says the log's bytes before a Resume's offset are not
// the ones it was made from.
var ErrResumeMismatch = errors.New("the log does not match the mark it is resumed from")

// fingerprintBytes is how much of the log before a mark Head and Tail
// cover: not all of it, since hashing a year's log (205 MB) cost every
// reader 1.2 s, against 9 µs. The log is only appended to or cut at a
// torn tail, which the tail catches; a stale fold never targets a tree
// its ref does not hold (checkpoints.Find; tests/fold_stale_test.go).
const fingerprintBytes = 4096

// Resume marks the end of what l has read or appended: the point a later
// read of the same file can go on from.
func (l *Log) Resume() (Resume, error) {
	r := Resume{Offset: l.valid, Lines: l.lines, Last: l.last, High: l.high, Since: l.since,
		Damage: l.damage, Damaged: l.damaged}
	if r.Offset == 0 {
		return r, nil
	}
	f, err := statefile.Open(l.path, os.O_RDONLY, 0)
	if err != nil {
		return Resume{}, err
	}
	defer f.Close()
	r.Head, r.Tail, err = fingerprint(f, r.Offset)
	return r, err
}

// ResumeScan reads the records after the mark r, as ScanWith reads a whole
// log, and returns the log as a read of every line would: its last seq, its
// damage (the mark's and the new), its end. It returns ErrResumeMismatch,
// reading nothing, when the file's bytes before the mark are not those r
// was made from.
func ResumeScan(path string, r Resume, o ScanOptions, each func(*Entry)) (*Log, error) {
	return scanFrom(path, &r, o, each)
}

// matches checks the open log f against the mark.
func (r *Resume) matches(f *os.File) error {
	if r.Offset < 0 || r.Lines < 0 || r.Last < 0 || r.High < r.Last || r.Damaged < len(r.Damage) {
		return ErrResumeMismatch
	}
	if r.Offset == 0 {
		return nil
	}
	head, tail, err := fingerprint(f, r.Offset)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, ErrResumeMismatch) {
		return ErrResumeMismatch
	}
	if err != nil {
		return err
	}
	if head != r.Head || tail != r.Tail {
		return ErrResumeMismatch
	}
	return nil
}

// fingerprint hashes the first and the last fingerprintBytes of f before
// offset; the byte just before offset must end a line.
func fingerprint(f *os.File, offset int64) (string, string, error) {
	n := min(offset, fingerprintBytes)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return "", "", err
	}
	h := sha256.Sum256(buf)
	if _, err := f.ReadAt(buf, offset-n); err != nil {
		return "", "", err
	}
	if !bytes.HasSuffix(buf, []byte("\n")) {
		return "", "", ErrResumeMismatch
	}
	t := sha256.Sum256(buf)
	return hex.EncodeToString(h[:]), hex.EncodeToString(t[:]), nil
}

// order is the check of the lines after the mark, as a read of the whole
// log would stand there.
func (r *Resume) order() order {
	return order{line: r.Lines, last: r.Last, high: r.High, since: r.Since,
		damage: append([]Damage(nil), r.Damage...), count: r.Damaged}
}

// Check returns ErrResumeMismatch when the log at path does not hold,
// before the mark, the bytes r was made from: what ResumeScan checks
// first, for a reader that needs no record after the mark.
func (r Resume) Check(path string) error {
	f, err := statefile.Open(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		if r.Offset > 0 {
			return ErrResumeMismatch
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return r.matches(f)
}

// Lines is how many whole lines the log holds up to its end as read,
// blank and damaged ones included.
func (l *Log) Lines() int64 { return l.lines }
