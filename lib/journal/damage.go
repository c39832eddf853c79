package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Kinds of damage a whole line of the log can show. A torn tail (bytes after
// the last newline) is not damage: it is what a crash mid-write leaves, and
// the next writer cuts it. Damage is anything else that is not a record in
// order, and nothing ever cuts or rewrites it: the log is the truth, and a
// damaged line may be the only trace of a checkpoint whose ref still exists.
const (
	// LineUnreadable: not a JSON object of a record (cut short, garbage,
	// NUL bytes, a member of the wrong type).
	LineUnreadable = "unreadable"
	// LineIncomplete: JSON, but without a seq (a positive integer), ts or type.
	LineIncomplete = "incomplete"
	// SeqRepeated: the seq of the record just before.
	SeqRepeated = "repeated_seq"
	// SeqBackwards: a seq below one already read.
	SeqBackwards = "backwards_seq"
	// SeqSkipped: a seq above the next, with no damaged line between that
	// could have held the missing ones.
	SeqSkipped = "skipped_seq"
)

// Damage is one damaged line of the log.
type Damage struct {
	Line int64  // 1 for the file's first line
	Kind string // LineUnreadable, LineIncomplete, SeqRepeated, SeqBackwards, SeqSkipped
	// Seq is the seq the line claims, 0 when none can be read.
	Seq int64
	// What says what is wrong, for people: "is not JSON", "has no type",
	// "repeats seq 4", "skips seq 5 to 6".
	What string
}

func (d Damage) String() string { return fmt.Sprintf("line %d %s", d.Line, d.What) }

// maxDamage is how many damaged lines a Log keeps; it counts them all.
const maxDamage = 20

// order checks the log's lines as they are read (docs/checkpoints.md#the-log: seq 1, 2, 3,
// ... with no gaps): it decides which records are taken, notes the damage
// with line numbers, and knows the highest seq any line claims, so that a
// writer goes on above all of them and seq stays monotonic in the file.
type order struct {
	line  int64 // the number of the line being read
	last  int64 // seq of the last record taken
	high  int64 // the highest seq a line claims, damaged lines included
	since int64 // unreadable or incomplete lines since the last record taken

	damage []Damage // the first maxDamage
	count  int      // all of them
}

// next counts a whole line, blank or not.
func (o *order) next() { o.line++ }

// note records a damaged line.
func (o *order) note(kind string, seq int64, what string) {
	o.count++
	if len(o.damage) < maxDamage {
		o.damage = append(o.damage, Damage{Line: o.line, Kind: kind, Seq: seq, What: what})
	}
}

// broken notes a line that is not a record; the seq it claims, when it
// claims one, still counts for the next writer.
func (o *order) broken(kind string, seq int64, what string) {
	if seq > 0 {
		what += fmt.Sprintf(" (it claims seq %d)", seq)
		o.high = max(o.high, seq)
	}
	o.since++
	o.note(kind, seq, what)
}

// decoded checks a line that decode read into e (err its failure) and
// reports whether e is a record to take.
func (o *order) decoded(line []byte, e *Entry, err error) bool {
	switch {
	case err != nil:
		seq, _, _ := headSeq(line)
		o.broken(LineUnreadable, seq, unreadable(line, err))
	case e.Seq < 1:
		o.broken(LineIncomplete, 0, "has no seq (a positive integer)")
	case e.Ts == "":
		o.broken(LineIncomplete, e.Seq, "has no ts")
	case e.Type == "":
		o.broken(LineIncomplete, e.Seq, "has no type")
	default:
		return o.inOrder(e.Seq)
	}
	return false
}

// inOrder checks the seq of a whole record and reports whether it is taken:
// one that repeats or goes back is not (the record before it stands), one
// that skips is, the gap being noted.
func (o *order) inOrder(seq int64) bool {
	switch {
	case seq == o.last:
		o.note(SeqRepeated, seq, fmt.Sprintf("repeats seq %d", seq))
		return false
	case seq < o.last:
		o.note(SeqBackwards, seq, fmt.Sprintf("has seq %d after seq %d", seq, o.last))
		return false
	case seq-o.last-1 > o.since:
		o.note(SeqSkipped, seq, skipped(o.last+1, seq-1))
	}
	o.last, o.since = seq, 0
	o.high = max(o.high, seq)
	return true
}

// skipped says which seqs a record jumps over.
func skipped(from, to int64) string {
	if from == to {
		return fmt.Sprintf("skips seq %d", from)
	}
	return fmt.Sprintf("skips seq %d to %d", from, to)
}

// unreadable says why a line is not a record.
func unreadable(line []byte, err error) string {
	if !json.Valid(line) {
		return "is not JSON"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
		return "is not a record: " + msg
	}
	return "is not a JSON object"
}

// headSeq reads the seq from the head every writer gives a record,
// {"seq":N, without decoding the line; rest is what follows the comma.
func headSeq(line []byte) (seq int64, rest []byte, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !found {
		return 0, nil, false
	}
	i := bytes.IndexByte(rest, ',')
	if i <= 0 {
		return 0, nil, false
	}
	seq, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	return seq, rest[i+1:], err == nil
}

// DamageText says what is damaged in at most n lines of the log's, and how
// many more there are: "line 3 is not JSON (it claims seq 2); line 7
// repeats seq 5; and 4 more". It is "" when the log has no damage.
func (l *Log) DamageText(n int) string {
	var parts []string
	for _, d := range l.damage[:min(n, len(l.damage))] {
		parts = append(parts, d.String())
	}
	if more := l.damaged - len(parts); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}
