// Package ojson reads and writes JSON keeping the order of object members,
// so a settings file or a transcript line comes back with its keys where
// they were (JavaScript's JSON.stringify and object spread keep insertion
// order, and the harnesses write their files that way).
package ojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Object is a JSON object with its members in order.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Keys lists the member names in order.
func (o *Object) Keys() []string { return append([]string(nil), o.keys...) }

// Len is the number of members.
func (o *Object) Len() int { return len(o.keys) }

// Get returns a member's value.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// String returns a member that is a string, or "".
func (o *Object) String(k string) string {
	s, _ := o.vals[k].(string)
	return s
}

// Set replaces a member in place, or appends it.
func (o *Object) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Delete removes a member.
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Clone copies the object one level deep.
func (o *Object) Clone() *Object {
	c := &Object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

// Parse reads one JSON value: *Object, []any, json.Number, string, bool or nil.
func Parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := value(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// ParseObject reads one JSON object.
func ParseObject(data []byte) (*Object, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return o, nil
}

func value(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := value(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := value(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// Compact renders v on one line with no spaces, as JSON.stringify(v) does.
func Compact(v any) []byte {
	var b bytes.Buffer
	write(&b, v, "", "", false)
	return b.Bytes()
}

// Indent renders v as JSON.stringify(v, null, indent) does: one member a
// line, empty objects and arrays as {} and [].
func Indent(v any, indent string) []byte {
	var b bytes.Buffer
	write(&b, v, indent, "", true)
	return b.Bytes()
}

func write(b *bytes.Buffer, v any, indent, prefix string, pretty bool) {
	inner := prefix + indent
	switch t := v.(type) {
	case *Object:
		if t.Len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if pretty {
				b.WriteString("\n" + inner)
			}
			writeString(b, k)
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
			write(b, t.vals[k], indent, inner, pretty)
		}
		if pretty {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte('}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if pretty {
				b.WriteString("\n" + inner)
			}
			write(b, x, indent, inner, pretty)
		}
		if pretty {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte(']')
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(string(t))
	case nil:
		b.WriteString("null")
	default:
		data, err := json.Marshal(t)
		if err != nil {
			b.WriteString("null")
			return
		}
		b.Write(data)
	}
}

// writeString escapes like JSON.stringify: quote, backslash and control
// characters only, so non-ASCII text and <, >, & stay as they were.
func writeString(b *bytes.Buffer, s string) {
	var enc bytes.Buffer
	e := json.NewEncoder(&enc)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	out := strings.TrimSuffix(enc.String(), "\n")
	out = strings.ReplaceAll(out, `\u2028`, "\u2028")
	out = strings.ReplaceAll(out, `\u2029`, "\u2029")
	b.WriteString(out)
}

// DetectIndent guesses the indentation unit of a pretty-printed document:
// the leading white space of its first indented line, or two spaces.
func DetectIndent(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}
