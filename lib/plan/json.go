package plan

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/git-venom/git-venom/lib/ui"
)

// WriteJSON writes r and a newline exactly as ui.Streams.JSON does, but
// the files and left lists entry by entry as they go out: a
// 300,000-path plan is neither held as one buffer nor encoded through
// reflection an entry. The rest, small, is ui.Marshal's.
func (r *Result) WriteJSON(w io.Writer) error {
	out := bufio.NewWriterSize(w, 64<<10)
	top := *r
	top.Repos = nil
	b, err := ui.Marshal(&top)
	if err != nil {
		return err
	}
	// repos is the result's last member: what precedes it goes out as
	// is, and each repository is cut at its two lists, which are written
	// in between.
	const reposNull, lists = `"repos":null}`, `"files":null,"left":null`
	if r.Repos == nil || !bytes.HasSuffix(b, []byte(reposNull)) {
		return writeWhole(out, r)
	}
	parts := make([][2][]byte, len(r.Repos))
	for i := range r.Repos {
		rj := r.Repos[i]
		rj.Files, rj.Left = nil, nil
		m, err := ui.Marshal(&rj)
		if err != nil {
			return err
		}
		before, after, ok := bytes.Cut(m, []byte(lists))
		if !ok || r.Repos[i].Files == nil || r.Repos[i].Left == nil {
			return writeWhole(out, r)
		}
		parts[i] = [2][]byte{before, after}
	}
	out.Write(b[:len(b)-len(reposNull)])
	out.WriteString(`"repos":[`)
	for i := range r.Repos {
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(parts[i][0])
		out.WriteString(`"files":[`)
		for k := range r.Repos[i].Files {
			f := &r.Repos[i].Files[k]
			e := out.AvailableBuffer()
			if k > 0 {
				e = append(e, ',')
			}
			if f.By != "" || f.Turns != nil || f.Lines != nil || f.Markers != nil || f.Detail != nil {
				// A revert's conflict, one of few: through ui.Marshal.
				m, err := ui.Marshal(f)
				if err != nil {
					return err
				}
				out.Write(append(e, m...))
				continue
			}
			e = appendMember(e, '{', "path", f.Path)
			if f.PathB64 != "" {
				e = appendMember(e, ',', "path_b64", f.PathB64)
			}
			e = appendMember(e, ',', "change", f.Change)
			e = appendMember(e, ',', "class", f.Class)
			out.Write(append(e, '}'))
		}
		out.WriteString(`],"left":[`)
		for k := range r.Repos[i].Left {
			l := &r.Repos[i].Left[k]
			e := out.AvailableBuffer()
			if k > 0 {
				e = append(e, ',')
			}
			e = appendMember(e, '{', "path", l.Path)
			if l.PathB64 != "" {
				e = appendMember(e, ',', "path_b64", l.PathB64)
			}
			e = appendMember(e, ',', "reason", l.Reason)
			if l.Detail != nil {
				e = appendMember(e, ',', "detail", *l.Detail)
			}
			out.Write(append(e, '}'))
		}
		out.WriteByte(']')
		out.Write(parts[i][1])
	}
	out.WriteString("]}\n")
	return out.Flush()
}

// writeWhole is WriteJSON through ui.Marshal alone.
func writeWhole(out *bufio.Writer, r *Result) error {
	b, err := ui.Marshal(r)
	if err != nil {
		return err
	}
	out.Write(b)
	out.WriteByte('\n')
	return out.Flush()
}

// appendMember appends sep, the member name and its string value.
func appendMember(b []byte, sep byte, name, value string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendString appends s as a JSON string as encoding/json writes it
// without HTML escaping: quote, backslash and control characters escaped,
// invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
