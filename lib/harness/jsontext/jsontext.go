// Package jsontext edits a JSON document as text. It finds where each
// value lies, and inserts or removes object members and array elements
// there, so every other byte (indentation, compact entries, key order,
// and comments where the format allows them) stays as the person wrote it:
// hook install touches only its own entries in a settings file, and
// uninstall after install gives back the file's exact bytes.
package jsontext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/git-venom/git-venom/lib/harness/ojson"
)

// Kind is what a value is.
type Kind uint8

// Kinds of values.
const (
	Object Kind = iota + 1
	Array
	String
	Number
	Literal // true, false or null
)

// Value is one value of the document, at Text[Start:End].
type Value struct {
	Kind       Kind
	Start, End int
	Members    []Member // an Object's, in order
	Elems      []*Value // an Array's
}

// Member is one member of an object; its text runs from Start (the key's
// opening quote) to Value.End.
type Member struct {
	Key   string
	Start int
	Value *Value
}

// Doc is a parsed document.
type Doc struct {
	Text     []byte
	Root     *Value
	comments bool
}

// SyntaxError says where the text stops being JSON.
type SyntaxError struct {
	Line, Col int // from 1; the column counts characters
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// maxDepth bounds nesting: a settings file is a few levels deep, and a
// planted one must not exhaust the stack.
const maxDepth = 1000

// Parse reads text as one JSON value (RFC 8259). With comments, // and
// /* */ comments are allowed where white space is (JSON with comments, as
// Gemini CLI reads its settings).
func Parse(text []byte, comments bool) (*Doc, error) {
	p := &parser{text: text, comments: comments}
	if err := p.space(); err != nil {
		return nil, err
	}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(text) {
		return nil, p.fail(p.pos, "unexpected %s after the JSON value", p.what(p.pos))
	}
	return &Doc{Text: text, Root: root, comments: comments}, nil
}

type parser struct {
	text     []byte
	pos      int
	comments bool
}

func (p *parser) fail(at int, format string, args ...any) *SyntaxError {
	line, col := 1, 1
	for i := 0; i < at && i < len(p.text); {
		r, n := utf8.DecodeRune(p.text[i:])
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// what names the character at i for an error.
func (p *parser) what(i int) string {
	if i >= len(p.text) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.text[i:])
	return fmt.Sprintf("%q", r)
}

// space skips white space, and comments when allowed.
func (p *parser) space() error {
	for p.pos < len(p.text) {
		switch c := p.text[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.comments && p.pos+1 < len(p.text) && p.text[p.pos+1] == '/':
			end := bytes.IndexByte(p.text[p.pos:], '\n')
			if end < 0 {
				p.pos = len(p.text)
			} else {
				p.pos += end
			}
		case c == '/' && p.comments && p.pos+1 < len(p.text) && p.text[p.pos+1] == '*':
			end := bytes.Index(p.text[p.pos+2:], []byte("*/"))
			if end < 0 {
				return p.fail(p.pos, "a /* comment is not closed")
			}
			p.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value(depth int) (*Value, error) {
	if depth > maxDepth {
		return nil, p.fail(p.pos, "nested more than %d levels deep", maxDepth)
	}
	if p.pos >= len(p.text) {
		return nil, p.fail(p.pos, "unexpected end of file, expected a value")
	}
	start := p.pos
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		if err := p.str(); err != nil {
			return nil, err
		}
		return &Value{Kind: String, Start: start, End: p.pos}, nil
	case c == '-' || c >= '0' && c <= '9':
		if err := p.number(); err != nil {
			return nil, err
		}
		return &Value{Kind: Number, Start: start, End: p.pos}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.text[p.pos:], []byte(lit)) {
				p.pos += len(lit)
				return &Value{Kind: Literal, Start: start, End: p.pos}, nil
			}
		}
		return nil, p.fail(p.pos, "unexpected %s, expected a value", p.what(p.pos))
	}
}

func (p *parser) object(depth int) (*Value, error) {
	v := &Value{Kind: Object, Start: p.pos}
	p.pos++ // {
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
		v.End = p.pos
		return v, nil
	}
	for {
		if p.pos >= len(p.text) || p.text[p.pos] != '"' {
			return nil, p.fail(p.pos, "unexpected %s, expected a member name in quotes", p.what(p.pos))
		}
		keyStart := p.pos
		if err := p.str(); err != nil {
			return nil, err
		}
		var key string
		if err := json.Unmarshal(p.text[keyStart:p.pos], &key); err != nil {
			return nil, p.fail(keyStart, "%v", err)
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.text) || p.text[p.pos] != ':' {
			return nil, p.fail(p.pos, "unexpected %s, expected ':' after a member name", p.what(p.pos))
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Members = append(v.Members, Member{Key: key, Start: keyStart, Value: val})
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.text) && p.text[p.pos] == '}' {
			p.pos++
			v.End = p.pos
			return v, nil
		}
		if p.pos >= len(p.text) || p.text[p.pos] != ',' {
			return nil, p.fail(p.pos, "unexpected %s, expected ',' or '}'", p.what(p.pos))
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	v := &Value{Kind: Array, Start: p.pos}
	p.pos++ // [
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
		v.End = p.pos
		return v, nil
	}
	for {
		el, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, el)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.text) && p.text[p.pos] == ']' {
			p.pos++
			v.End = p.pos
			return v, nil
		}
		if p.pos >= len(p.text) || p.text[p.pos] != ',' {
			return nil, p.fail(p.pos, "unexpected %s, expected ',' or ']'", p.what(p.pos))
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
	}
}

// str skips a string, checking its escapes and that it holds no control
// character.
func (p *parser) str() error {
	start := p.pos
	p.pos++ // "
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil
		case c < 0x20:
			return p.fail(p.pos, "a control character in a string")
		case c == '\\':
			if p.pos+1 >= len(p.text) {
				return p.fail(p.pos, "a string is not closed")
			}
			switch p.text[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.text) || !isHex(p.text[p.pos+2:p.pos+6]) {
					return p.fail(p.pos, "\\u is not followed by 4 hex digits")
				}
				p.pos += 6
			default:
				return p.fail(p.pos, "unknown escape \\%c", p.text[p.pos+1])
			}
		default:
			p.pos++
		}
	}
	return p.fail(start, "a string is not closed")
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *parser) number() error {
	digits := func() int {
		n := 0
		for p.pos < len(p.text) && p.text[p.pos] >= '0' && p.text[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.text[p.pos] == '-' {
		p.pos++
	}
	at := p.pos
	switch n := digits(); {
	case n == 0:
		return p.fail(p.pos, "unexpected %s in a number", p.what(p.pos))
	case n > 1 && p.text[at] == '0':
		return p.fail(at, "a number has a leading zero")
	}
	if p.pos < len(p.text) && p.text[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.fail(p.pos, "unexpected %s after a decimal point", p.what(p.pos))
		}
	}
	if p.pos < len(p.text) && (p.text[p.pos] == 'e' || p.text[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.text) && (p.text[p.pos] == '+' || p.text[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.fail(p.pos, "unexpected %s in an exponent", p.what(p.pos))
		}
	}
	return nil
}

// Member returns an object's member named key (the last one, as
// JSON.parse keeps), and its index; -1 when there is none.
func (o *Value) Member(key string) (int, *Value) {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if o.Members[i].Key == key {
			return i, o.Members[i].Value
		}
	}
	return -1, nil
}

// Bytes is a value's text.
func (d *Doc) Bytes(v *Value) []byte { return d.Text[v.Start:v.End] }

// String is a string value's content ("" for any other value).
func (d *Doc) String(v *Value) string {
	var s string
	if v != nil && v.Kind == String {
		_ = json.Unmarshal(d.Bytes(v), &s)
	}
	return s
}

// Decode reads a value as ojson does (*ojson.Object, []any, ...); a value
// holding comments is read with them taken out.
func (d *Doc) Decode(v *Value) (any, error) {
	text := d.Bytes(v)
	if d.comments {
		text = d.stripped(v)
	}
	return ojson.Parse(text)
}

// stripped is v's text with its comments replaced by spaces.
func (d *Doc) stripped(v *Value) []byte {
	out := append([]byte(nil), d.Bytes(v)...)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i] == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/")) + i + 4
			for ; i < end; i++ {
				out[i] = ' '
			}
			i--
		}
	}
	return out
}

// span is one item of a container: a member (key to value) or an element.
type span struct{ start, end int }

func items(c *Value) []span {
	var out []span
	if c.Kind == Object {
		for _, m := range c.Members {
			out = append(out, span{m.Start, m.Value.End})
		}
		return out
	}
	for _, e := range c.Elems {
		out = append(out, span{e.Start, e.End})
	}
	return out
}

// InsertMember returns the text with key: value added as the object's
// last member, written as the object's other members are (one a line,
// indented as they are; or on the line, for an object written on one).
func (d *Doc) InsertMember(obj *Value, key string, value any) []byte {
	var k bytes.Buffer
	k.Write(ojson.Compact(key))
	k.WriteString(": ")
	return d.insert(obj, len(obj.Members), k.String(), value)
}

// InsertElem returns the text with value as the array's element at
// index at (at most its length).
func (d *Doc) InsertElem(arr *Value, at int, value any) []byte {
	return d.insert(arr, at, "", value)
}

// RemoveMember returns the text without the object's i-th member.
func (d *Doc) RemoveMember(obj *Value, i int) []byte { return d.remove(obj, i) }

// RemoveElem returns the text without the array's i-th element.
func (d *Doc) RemoveElem(arr *Value, i int) []byte { return d.remove(arr, i) }

func (d *Doc) insert(c *Value, at int, key string, value any) []byte {
	its := items(c)
	if at < 0 || at > len(its) {
		at = len(its)
	}
	multi := d.multiline(c)
	prefix := d.childIndent(c, its)
	nl := d.newline()
	item := key + compact(value)
	if multi {
		item = key + strings.ReplaceAll(string(ojson.Indent(value, d.unit())), "\n", nl+prefix)
	}
	switch {
	case len(its) == 0:
		if multi {
			return d.splice(c.Start+1, c.End-1, nl+prefix+item+nl+d.lineIndent(c.Start))
		}
		return d.splice(c.Start+1, c.End-1, item)
	case at == len(its):
		pos := its[len(its)-1].end
		if !multi {
			return d.splice(pos, pos, ", "+item)
		}
		// A comment closing the last item's line stays on that line.
		if eol, ok := d.commentToEOL(pos); ok {
			out := d.splice(eol, eol, nl+prefix+item)
			return append(out[:pos:pos], append([]byte(","), out[pos:]...)...)
		}
		return d.splice(pos, pos, ","+nl+prefix+item)
	default:
		pos := its[at].start
		if multi && d.firstOnLine(pos) {
			return d.splice(pos, pos, item+","+nl+prefix)
		}
		return d.splice(pos, pos, item+", ")
	}
}

// compact writes a value on one line, with a space after each comma and
// colon of its own (not those inside strings).
func compact(value any) string {
	var b strings.Builder
	text := ojson.Compact(value)
	for i := 0; i < len(text); i++ {
		c := text[i]
		b.WriteByte(c)
		switch c {
		case '"':
			for i++; i < len(text); i++ {
				b.WriteByte(text[i])
				if text[i] == '\\' {
					i++
					b.WriteByte(text[i])
				} else if text[i] == '"' {
					break
				}
			}
		case ',', ':':
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func (d *Doc) remove(c *Value, i int) []byte {
	its := items(c)
	switch {
	case len(its) == 1:
		return d.splice(c.Start+1, c.End-1, "")
	case i < len(its)-1:
		// The item, its comma and what leads to the next (as insert puts
		// an item before another).
		return d.splice(its[i].start, its[i+1].start, "")
	}
	// The last: the comma after the one before, and the item with the
	// line break before it (as insert appends one).
	cur := its[i]
	comma := d.commaAfter(its[i-1].end)
	from := comma + 1
	if ls := d.lineStart(cur.start); ls > comma+1 && d.firstOnLine(cur.start) {
		from = ls - 1 // the newline before the item
		if from > comma+1 && d.Text[from-1] == '\r' {
			from--
		}
		// A // comment before it ends at that newline: kept unless a line
		// break follows the item to end the comment instead.
		if bytes.Contains(d.Text[comma+1:from], []byte("//")) && !d.breakAfter(cur.end) {
			from = ls
		}
	}
	out := d.splice(from, cur.end, "")
	return append(out[:comma:comma], out[comma+1:]...)
}

// breakAfter: only blanks lie between pos and the end of its line.
func (d *Doc) breakAfter(pos int) bool {
	rest := bytes.TrimLeft(d.Text[pos:], " \t\r")
	return len(rest) > 0 && rest[0] == '\n'
}

// commaAfter is the position of the comma after the item ending at pos,
// past white space and comments.
func (d *Doc) commaAfter(pos int) int {
	p := &parser{text: d.Text, pos: pos, comments: d.comments}
	_ = p.space()
	return p.pos
}

func (d *Doc) splice(from, to int, with string) []byte {
	out := make([]byte, 0, len(d.Text)-(to-from)+len(with))
	out = append(out, d.Text[:from]...)
	out = append(out, with...)
	return append(out, d.Text[to:]...)
}

// multiline: the container is written over several lines; an empty one
// follows the document (an empty object in a one-line file stays on it).
func (d *Doc) multiline(c *Value) bool {
	if len(items(c)) == 0 && c != d.Root {
		return bytes.Contains(d.Bytes(d.Root), []byte("\n"))
	}
	return len(items(c)) == 0 || bytes.Contains(d.Bytes(c), []byte("\n"))
}

// childIndent is the indentation of the container's items: that of its
// first item when it begins its line, else the container's line's and one
// unit more.
func (d *Doc) childIndent(c *Value, its []span) string {
	if len(its) > 0 && d.firstOnLine(its[0].start) {
		return string(d.Text[d.lineStart(its[0].start):its[0].start])
	}
	return d.lineIndent(c.Start) + d.unit()
}

// newline is the document's: CRLF when it has one.
func (d *Doc) newline() string {
	if bytes.Contains(d.Text, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

func (d *Doc) unit() string { return ojson.DetectIndent(d.Text) }

func (d *Doc) lineStart(pos int) int { return bytes.LastIndexByte(d.Text[:pos], '\n') + 1 }

// firstOnLine: only white space precedes pos on its line.
func (d *Doc) firstOnLine(pos int) bool {
	return len(bytes.TrimLeft(d.Text[d.lineStart(pos):pos], " \t")) == 0
}

// lineIndent is the white space that begins pos's line.
func (d *Doc) lineIndent(pos int) string {
	line := d.Text[d.lineStart(pos):pos]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// commentToEOL: after pos come only blanks and a // comment up to the
// end of the line; eol is where that line's newline is.
func (d *Doc) commentToEOL(pos int) (int, bool) {
	if !d.comments {
		return 0, false
	}
	rest := d.Text[pos:]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return 0, false
	}
	line := bytes.TrimRight(bytes.TrimLeft(rest[:nl], " \t"), "\r")
	if !bytes.HasPrefix(line, []byte("//")) {
		return 0, false
	}
	eol := pos + nl
	if eol > pos && d.Text[eol-1] == '\r' {
		eol--
	}
	return eol, true
}
