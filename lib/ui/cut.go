package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Cut keeps s within width columns, as a table cell or a line of git's
// one-line formats is kept: what does not fit is left out and "…" ends
// what is left. Escape sequences (colour) are kept whole and count
// nothing, so a styled cell stays styled.
func Cut(s string, width int) string {
	if Width(s) <= width {
		return s
	}
	return cut(s, max(width-1, 0), 0)
}

// CutMiddle keeps s within width columns by leaving out its middle: an
// id keeps its start and its end ("gemini-8c4d…3c4d4e5f"), which tell
// ids of one harness apart.
func CutMiddle(s string, width int) string {
	if Width(s) <= width {
		return s
	}
	room := max(width-1, 0)
	return cut(s, room-room/2, room/2)
}

// cut keeps head columns of s's start and tail of its end with "…"
// between; every escape sequence stays, in its order.
func cut(s string, head, tail int) string {
	type token struct {
		text  string
		width int
	}
	var toks []token
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if loc := ansi().FindStringIndex(s[i:]); loc != nil && loc[0] == 0 {
				toks = append(toks, token{s[i : i+loc[1]], 0})
				i += loc[1]
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		toks = append(toks, token{s[i : i+n], runewidth.RuneWidth(r)})
		i += n
	}
	keep := make([]bool, len(toks))
	col := 0
	for i, tk := range toks {
		if col+tk.width > head {
			break
		}
		keep[i], col = true, col+tk.width
	}
	col = 0
	for i := len(toks) - 1; i >= 0 && !keep[i]; i-- {
		if col+toks[i].width > tail {
			break
		}
		keep[i], col = true, col+toks[i].width
	}
	var b strings.Builder
	dots := false
	for i, tk := range toks {
		if keep[i] {
			b.WriteString(tk.text)
			continue
		}
		if !dots {
			b.WriteString("…")
			dots = true
		}
		if tk.width == 0 {
			b.WriteString(tk.text)
		}
	}
	return b.String()
}
