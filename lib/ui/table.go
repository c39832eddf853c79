package ui

import (
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/mattn/go-runewidth"
)

// Table writes rows whose columns line up on a terminal. text/tabwriter
// counts bytes, so a colour code or a wide character shifted every row
// after it; here a cell's width is what the terminal shows of it: colour
// codes count nothing, a CJK character or an emoji counts two.
type Table struct {
	w    io.Writer
	rows [][]string // a nil row is a note, printed as it is
	note []string
	fit  *fit
}

// fit is what Fit asked: the table's width, and the column cut to it.
type fit struct {
	width, col int
	cut        func(string, int) string
}

// minCut is the narrowest Fit cuts a column to: below it a cell says
// nothing, and the row is let pass the width instead.
const minCut = 12

// colGap is the blank between columns.
const colGap = 2

// NewTable writes a table to w on Flush.
func NewTable(w io.Writer) *Table { return &Table{w: w} }

// Row adds a row; cells may hold colour codes.
func (t *Table) Row(cells ...string) {
	t.rows = append(t.rows, cells)
	t.note = append(t.note, "")
}

// Note adds a line outside the columns, in its place among the rows.
func (t *Table) Note(line string) {
	t.rows = append(t.rows, nil)
	t.note = append(t.note, line)
}

// Fit keeps each row within width columns, as git's one-line formats
// do: where the rows are wider, column col's cells are cut (cut is Cut
// for a label, CutMiddle for an id), never wrapped, so each row stays
// one line and no cell can pass for a row of its own.
func (t *Table) Fit(width, col int, cut func(string, int) string) {
	t.fit = &fit{width, col, cut}
}

// Flush writes the table: each column as wide as its widest cell, the last
// cell of a row never padded.
func (t *Table) Flush() error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(c))
		}
	}
	if f := t.fit; f != nil && f.col < len(widths) {
		total := (len(widths) - 1) * colGap
		for _, w := range widths {
			total += w
		}
		if total > f.width && widths[f.col] > minCut {
			widths[f.col] = max(minCut, widths[f.col]-(total-f.width))
			for _, r := range t.rows {
				if f.col < len(r) {
					r[f.col] = f.cut(r[f.col], widths[f.col])
				}
			}
		}
	}
	var b strings.Builder
	for i, r := range t.rows {
		if r == nil {
			b.WriteString(t.note[i])
			b.WriteByte('\n')
			continue
		}
		line := strings.Builder{}
		for j, c := range r {
			line.WriteString(c)
			if j < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[j]-Width(c)+colGap))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// ansi matches the escape sequences a styled string holds: CSI (colours,
// SGR) and OSC (hyperlinks) sequences.
var ansi = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)
})

// Width is how many columns s takes on a terminal: escape sequences take
// none, wide characters two, combining marks none.
func Width(s string) int {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansi().ReplaceAllString(s, "")
	}
	return runewidth.StringWidth(s)
}
