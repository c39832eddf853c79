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
	w     io.Writer
	rows  [][]string // a nil row is a note, printed as it is
	note  []string
	whole []bool // the row's last cell is never wrapped
	width int    // Fit's width; 0 for none
}

// colGap is the blank between columns.
const colGap = 2

// NewTable writes a table to w on Flush.
func NewTable(w io.Writer) *Table { return &Table{w: w} }

// Row adds a row; cells may hold colour codes.
func (t *Table) Row(cells ...string) {
	t.rows = append(t.rows, cells)
	t.note = append(t.note, "")
	t.whole = append(t.whole, false)
}

// RowWhole adds a row whose last cell Fit never wraps: a command, to copy
// whole.
func (t *Table) RowWhole(cells ...string) {
	t.Row(cells...)
	t.whole[len(t.whole)-1] = true
}

// Note adds a line outside the columns, in its place among the rows.
func (t *Table) Note(line string) {
	t.rows = append(t.rows, nil)
	t.note = append(t.note, line)
	t.whole = append(t.whole, true)
}

// Fit keeps the table within width columns: a first cell too wide for
// its column (a long agent id) goes on a line of its own above the rest
// of its row, and a last cell too wide for the room left (a label, a
// message) wraps within its column.
func (t *Table) Fit(width int) { t.width = width }

// minLast is the room Fit keeps for the last column before it moves a
// first cell to a line of its own.
const minLast = 20

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
	first := -1 // no first cell goes on a line of its own
	if t.width > 0 && len(widths) > 1 {
		fixed := (len(widths) - 1) * colGap
		for _, w := range widths[1 : len(widths)-1] {
			fixed += w
		}
		first = t.width - fixed - min(widths[len(widths)-1], minLast)
		widths[0] = 0
		for _, r := range t.rows {
			if len(r) > 0 && Width(r[0]) <= first {
				widths[0] = max(widths[0], Width(r[0]))
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
		if first >= 0 && len(r) > 1 && Width(r[0]) > widths[0] {
			b.WriteString(r[0] + "\n")
			r = append([]string{""}, r[1:]...)
		}
		line := strings.Builder{}
		start := 0 // where the last cell starts
		for j, c := range r {
			if j == len(r)-1 {
				if room := t.width - start; t.width > 0 && !t.whole[i] && Width(c) > room {
					c = strings.ReplaceAll(Wrap(c, room, ""), "\n", "\n"+strings.Repeat(" ", start))
				}
				line.WriteString(c)
				break
			}
			line.WriteString(c)
			line.WriteString(strings.Repeat(" ", widths[j]-Width(c)+colGap))
			start += widths[j] + colGap
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
