package ui

import "strings"

// Columns80 is the width human output keeps to, as git's messages do,
// whatever the terminal's width.
const Columns80 = 80

// Wrap fills each line of text to width columns, as git's messages read:
// a word that does not fit starts the next line, after the line's own
// leading blanks and indent. A word wider than a line (a long path, a
// command) stands whole on a line of its own, never cut.
func Wrap(text string, width int, indent string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if Width(l) <= width {
			continue
		}
		rest := strings.TrimLeft(l, " ")
		lead := l[:len(l)-len(rest)]
		lines[i] = pack(lead, strings.Split(rest, " "), width, lead+indent)
	}
	return strings.Join(lines, "\n")
}

// pack joins parts with blanks after prefix, starting a new line, after
// indent, where the next part would pass width columns. A part is never
// split: one wider than a line stands alone on it.
func pack(prefix string, parts []string, width int, indent string) string {
	var b strings.Builder
	b.WriteString(prefix)
	col, fresh := Width(prefix), true
	for _, p := range parts {
		w := Width(p)
		switch {
		case fresh:
		case col+1+w <= width:
			b.WriteByte(' ')
			col++
		default:
			if p == "" {
				continue // a second blank at the break
			}
			b.WriteString("\n" + indent)
			col = Width(indent)
		}
		b.WriteString(p)
		col += w
		fresh = false
	}
	return b.String()
}

// PathLine is line, which names path, where it fits 80 columns; else
// lead, a sentence saying the same ending in ":", with the path on a
// line of its own below, indented: a path is never split (it may hold
// blanks) and is copied whole.
func PathLine(line, lead, path string) string {
	if Width(line) <= Columns80 {
		return line
	}
	return lead + "\n  " + path
}
