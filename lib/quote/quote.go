// Package quote shows stored strings (labels, ids, paths) in human output
// without letting them drive the terminal, as git quotes paths (quote.c,
// quote_c_style): a string that needs it goes in double quotes with C
// escapes. Printable UTF-8 stays (core.quotePath=false); every rune
// unicode.IsGraphic rejects and every invalid byte becomes octal escapes
// of its bytes, so Unquote gives the exact bytes back.
package quote

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// C returns s as it is when nothing in it needs quoting, else s in double
// quotes with C escapes (git's quote_c_style).
func C(s string) string {
	if !Needs(s) {
		return s
	}
	return Always(s)
}

// Always returns s in double quotes with C escapes, needed or not: for a
// free-text value inside a line of space-separated fields.
func Always(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	escape(&b, s, true)
	b.WriteByte('"')
	return b.String()
}

// Text escapes what C escapes but adds no quotes and leaves " and \
// alone: for a whole message that already embeds stored strings (an
// error's text), where the aim is only that no byte reaches the terminal
// as a control.
func Text(s string) string {
	if !hasUnsafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	escape(&b, s, false)
	return b.String()
}

// Join is strings.Join of each item through C.
func Join(items []string, sep string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = C(s)
	}
	return strings.Join(q, sep)
}

// Needs reports whether C would quote s.
func Needs(s string) bool {
	return strings.ContainsAny(s, `"\`) || hasUnsafe(s)
}

// hasUnsafe reports a rune that does not print, or a byte that is not
// valid UTF-8. ASCII is decided without decoding: this runs on every
// string human output prints.
func hasUnsafe(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !prints(r, n) {
			return true
		}
		i += n
	}
	return false
}

// prints: a rune of n bytes decoded from a string is shown as it is.
// utf8.RuneError of width 1 is an invalid byte; U+FFFD written out in full
// (3 bytes) is a real, printable character.
func prints(r rune, n int) bool {
	if r == utf8.RuneError && n == 1 {
		return false
	}
	return unicode.IsGraphic(r)
}

// letters are git's one-letter escapes (quote.c's cq_lookup).
var letters = [0x20]byte{'\a': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r'}

func escape(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20 && letters[c] != 0:
				b.WriteByte('\\')
				b.WriteByte(letters[c])
			case c < 0x20 || c == 0x7f:
				octal(b, c)
			case quoted && (c == '"' || c == '\\'):
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if prints(r, n) {
			b.WriteString(s[i : i+n])
		} else {
			for j := i; j < i+n; j++ {
				octal(b, s[j])
			}
		}
		i += n
	}
}

func octal(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + c>>6)
	b.WriteByte('0' + c>>3&7)
	b.WriteByte('0' + c&7)
}

// ErrSyntax: Unquote's input is not a string C wrote.
var ErrSyntax = errors.New("quote: not a C-quoted string")

// Unquote reverses C (git's unquote_c_style): a string in double quotes
// has its escapes decoded; any other string is returned as it is.
func Unquote(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	if len(s) < 2 || s[len(s)-1] != '"' {
		return "", ErrSyntax
	}
	s = s[1 : len(s)-1]
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			return "", ErrSyntax
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", ErrSyntax
		}
		c = s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte(c)
		case c >= '0' && c <= '3':
			if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
				return "", ErrSyntax
			}
			b.WriteByte((c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
			i += 2
		default:
			k := strings.IndexByte("abtnvfr", c)
			if k < 0 {
				return "", ErrSyntax
			}
			b.WriteByte("\a\b\t\n\v\f\r"[k])
		}
	}
	return b.String(), nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
