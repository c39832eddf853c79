package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rec is a whole record line of agent a1 as a writer makes it, newline
// included.
func rec(seq int) string {
	return fmt.Sprintf(`{"seq":%d,"ts":"2026-01-01T00:00:00.000Z","type":"turn.started","agent":"a1","turn":"t%d"}`+"\n", seq, seq)
}

// cut is rec cut short inside, its newline kept: damage in the middle of a log.
func cut(seq int) string { return rec(seq)[:40] + "\n" }

func scanText(t *testing.T, text string) (*Log, []int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o666))
	var seqs []int64
	l, err := Scan(path, func(e *Entry) { seqs = append(seqs, e.Seq) })
	require.NoError(t, err)
	return l, seqs
}

func TestScan_FindsDamageWithLineNumbers(t *testing.T) {
	type want struct {
		seqs   []int64
		damage []Damage
	}
	cases := map[string]struct {
		text string
		want want
	}{
		"whole": {rec(1) + rec(2) + rec(3), want{seqs: []int64{1, 2, 3}}},
		"a record cut in the middle": {rec(1) + cut(2) + rec(3),
			want{[]int64{1, 3}, []Damage{{2, LineUnreadable, 2, "is not JSON (it claims seq 2)"}}}},
		"a cut record joined to the next": {rec(1) + strings.TrimSuffix(cut(2), "\n") + rec(3) + rec(4),
			want{[]int64{1, 4}, []Damage{{2, LineUnreadable, 2, "is not JSON (it claims seq 2)"}, {3, SeqSkipped, 4, "skips seq 2 to 3"}}}},
		"a repeated seq": {rec(1) + rec(2) + rec(2) + rec(3),
			want{[]int64{1, 2, 3}, []Damage{{3, SeqRepeated, 2, "repeats seq 2"}}}},
		"a seq going back": {rec(1) + rec(2) + rec(3) + rec(1),
			want{[]int64{1, 2, 3}, []Damage{{4, SeqBackwards, 1, "has seq 1 after seq 3"}}}},
		"skipped seqs": {rec(1) + rec(2) + rec(5),
			want{[]int64{1, 2, 5}, []Damage{{3, SeqSkipped, 5, "skips seq 3 to 4"}}}},
		"a log that does not start at 1": {rec(2) + rec(3),
			want{[]int64{2, 3}, []Damage{{1, SeqSkipped, 2, "skips seq 1"}}}},
		"blank lines count as lines, not damage": {rec(1) + "\n  \n" + rec(2) + cut(3) + rec(4),
			want{[]int64{1, 2, 4}, []Damage{{5, LineUnreadable, 3, "is not JSON (it claims seq 3)"}}}},
		"records without seq, ts or type": {rec(1) +
			`{"ts":"x","type":"turn.started"}` + "\n" +
			`{"seq":3,"type":"turn.started"}` + "\n" +
			`{"seq":4,"ts":"x"}` + "\n" +
			`{"seq":-5,"ts":"x","type":"turn.started"}` + "\n" + rec(6),
			want{[]int64{1, 6}, []Damage{
				{2, LineIncomplete, 0, "has no seq (a positive integer)"},
				{3, LineIncomplete, 3, "has no ts (it claims seq 3)"},
				{4, LineIncomplete, 4, "has no type (it claims seq 4)"},
				{5, LineIncomplete, 0, "has no seq (a positive integer)"},
			}}},
		"members of the wrong type": {rec(1) + `{"seq":"2","ts":"x","type":"turn.started"}` + "\n" + `[1,2]` + "\n" + rec(3),
			want{[]int64{1, 3}, []Damage{
				{2, LineUnreadable, 0, "is not a record: cannot unmarshal string into Go struct field Entry.seq of type int64"},
				{3, LineUnreadable, 0, "is not a JSON object"},
			}}},
		"NUL bytes inside": {rec(1) + "\x00\x00\x00\x00\n" + rec(3),
			want{[]int64{1, 3}, []Damage{{2, LineUnreadable, 0, "is not JSON"}}}},
		// A line that ends in a newline is whole whatever it holds: only the
		// bytes after the last newline are a torn tail.
		"a whole last line that is not JSON": {rec(1) + cut(2),
			want{[]int64{1}, []Damage{{2, LineUnreadable, 2, "is not JSON (it claims seq 2)"}}}},
		"a torn tail":       {rec(1) + rec(2) + rec(3)[:30], want{seqs: []int64{1, 2}}},
		"a NUL-filled tail": {rec(1) + rec(2) + strings.Repeat("\x00", 4096), want{seqs: []int64{1, 2}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			l, seqs := scanText(t, c.text)
			assert.Equal(t, c.want.seqs, seqs)
			assert.Equal(t, c.want.damage, l.Damage())
			assert.Equal(t, len(c.want.damage), l.Damaged())
			// The oracle agrees on every line.
			p := readPlainly([]byte(c.text))
			assert.Equal(t, p.damaged, linesOf(l.Damage()))
			assert.Equal(t, p.torn, l.Torn())
		})
	}
}

func linesOf(ds []Damage) []int64 {
	var out []int64
	for _, d := range ds {
		out = append(out, d.Line)
	}
	return out
}

// A writer never cuts or rewrites a damaged line, only a torn tail, and
// its record's seq is above every seq a line claims, damaged ones too.
func TestAppend_KeepsDamageAndGoesOnAboveItsSeqs(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		seq  int64
	}{
		"cut last line":         {rec(1) + cut(2), 3},
		"cut middle line":       {rec(1) + cut(2) + rec(3), 4},
		"garbage last line":     {rec(1) + "garbage\n", 2},
		"torn tail":             {rec(1) + rec(2)[:30], 2},
		"NUL tail":              {rec(1) + strings.Repeat("\x00", 100), 2},
		"a cut line that leads": {rec(1) + cut(7) + rec(2), 8},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(c.text), 0o666))
			l, err := Load(path)
			require.NoError(t, err)
			before := l.Damage()
			e, err := l.Append("turn.ended", map[string]string{"agent": "a1"})
			require.NoError(t, err)
			assert.Equal(t, c.seq, e.Seq)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			whole := c.text[:strings.LastIndexByte(c.text, '\n')+1]
			assert.True(t, strings.HasPrefix(string(data), whole), "every whole line stays as it was")
			assert.Equal(t, strings.Count(whole, "\n")+1, strings.Count(string(data), "\n"))
			again, seqs := scanText(t, string(data))
			assert.Equal(t, c.seq, seqs[len(seqs)-1])
			assert.Equal(t, before, again.Damage()[:len(before)], "the damage is still reported")
			assert.False(t, again.Torn())
		})
	}
}

// A read of one agent's records checks the other agents' lines by their
// head and end: a cut line, a repeated or a skipped seq show there too.
func TestScanWith_AgentSeesOtherAgentsDamage(t *testing.T) {
	other := func(seq int) string { return strings.Replace(rec(seq), `"a1"`, `"a2"`, 1) }
	text := rec(1) + other(2) + other(3)[:50] + "\n" + other(3) + other(3) + rec(4) + other(7) + rec(8)
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o666))
	var seqs []int64
	l, err := ScanWith(path, ScanOptions{Agent: "a1"}, func(e *Entry) { seqs = append(seqs, e.Seq) })
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 4, 8}, seqs)
	assert.Equal(t, []int64{3, 5, 7}, linesOf(l.Damage()))
	full, _ := scanText(t, text)
	assert.Equal(t, full.Damage(), l.Damage())
}

// Damage is counted whole and kept to the first maxDamage lines.
func TestScan_DamageIsCapped(t *testing.T) {
	text := rec(1) + strings.Repeat(rec(1), 3*maxDamage)
	l, seqs := scanText(t, text)
	assert.Equal(t, []int64{1}, seqs)
	assert.Equal(t, 3*maxDamage, l.Damaged())
	require.Len(t, l.Damage(), maxDamage)
	assert.Equal(t, int64(maxDamage+1), l.Damage()[maxDamage-1].Line)
}

func TestLog_DamageText(t *testing.T) {
	l, _ := scanText(t, rec(1)+cut(2)+rec(3)+rec(3)+rec(9))
	assert.Equal(t, "line 2 is not JSON (it claims seq 2); line 4 repeats seq 3; line 5 skips seq 4 to 8", l.DamageText(5))
	assert.Equal(t, "line 2 is not JSON (it claims seq 2); and 2 more", l.DamageText(1))
	whole, _ := scanText(t, rec(1))
	assert.Equal(t, "", whole.DamageText(3))
}

// A line longer than maxLine is passed over, not held: damage when whole,
// a torn tail when last, and a read costs maxLine of memory at most
// whatever the file holds (a sparse gigabyte of NULs, say).
func TestScan_OverlongLinesArePassedOver(t *testing.T) {
	old := maxLine
	maxLine = 2 * scanChunk
	defer func() { maxLine = old }()
	long := `{"seq":2,"ts":"x","type":"turn.started","label":"` + strings.Repeat("x", 3*scanChunk) + `"}` + "\n"
	fits := strings.Replace(rec(3), `"t3"`, `"`+strings.Repeat("y", 2*scanChunk-len(rec(3))+2)+`"`, 1)
	require.Len(t, fits, 2*scanChunk, "a line of exactly maxLine bytes is held")
	text := rec(1) + long + fits + rec(4) + strings.Repeat("\x00", 5*scanChunk)
	l, seqs := scanText(t, text)
	assert.Equal(t, []int64{1, 3, 4}, seqs)
	assert.Equal(t, []Damage{{2, LineUnreadable, 0, fmt.Sprintf("is longer than %d bytes", maxLine)}}, l.Damage())
	assert.True(t, l.Torn())
	p := readPlainly([]byte(text))
	assert.Equal(t, p.damaged, linesOf(l.Damage()))

	// The tail reader passes over it too, and a writer cuts the torn NULs.
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o666))
	tail := &Tail{Path: path}
	got, err := tail.Next()
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 3, 4}, seqsOf(got))
	w, err := Load(path)
	require.NoError(t, err)
	e, err := w.Append("turn.ended", map[string]string{"agent": "a1"})
	require.NoError(t, err)
	assert.Equal(t, int64(5), e.Seq)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	whole := text[:strings.LastIndexByte(text, '\n')+1]
	assert.True(t, strings.HasPrefix(string(data), whole))
	assert.Equal(t, 1, strings.Count(string(data[len(whole):]), "\n"), "one record after the whole lines")
	assert.NotContains(t, string(data), "\x00")
}
