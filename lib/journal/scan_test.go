package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reference reads a journal the plain way: the whole file, each whole line
// decoded by encoding/json, in seq order, damage skipped.
func reference(t *testing.T, data []byte) (es []Entry, last int64, torn bool) {
	t.Helper()
	p := readPlainly(data)
	return p.entries, p.last, p.torn
}

// plainRead is what readPlainly finds in a log.
type plainRead struct {
	entries []Entry
	last    int64
	damaged []int64 // the numbers of the damaged lines, as Scan must report them
	torn    bool
}

// readPlainly is the oracle of Scan, written from docs/checkpoints.md#the-log without its
// speed: every whole line that is not blank is a record (JSON of an
// object with a positive seq, a ts and a type, at most maxLine bytes with
// its newline) whose seq is one above the
// last record's, or damage. Only a seq that goes up is taken; a jump is
// also damage unless as many damaged lines came between as seqs are missing.
func readPlainly(data []byte) plainRead {
	var p plainRead
	valid := bytes.LastIndexByte(data, '\n') + 1
	p.torn = valid < len(data)
	if valid == 0 {
		return p
	}
	broken := int64(0) // damaged lines since the last record taken
	for i, line := range bytes.Split(data[:valid-1], []byte{'\n'}) {
		n := int64(i + 1)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Entry
		if len(line)+1 > maxLine || json.Unmarshal(line, &e) != nil || e.Seq < 1 || e.Ts == "" || e.Type == "" {
			p.damaged = append(p.damaged, n)
			broken++
			continue
		}
		if e.Seq <= p.last {
			p.damaged = append(p.damaged, n)
			continue
		}
		if e.Seq-p.last-1 > broken {
			p.damaged = append(p.damaged, n)
		}
		p.last, broken = e.Seq, 0
		p.entries = append(p.entries, e)
	}
	return p
}

// Scan reads through a buffer it reuses, so a record whose strings were
// slices of it would change under the caller's feet as the next chunk is
// read: every record kept from a log many chunks long must still be what
// its line says, at the end of the read. Lines cross the chunk's edges, one
// is longer than a chunk, some are damage, the last is torn.
func TestScan_RecordsOwnTheirStringsAcrossChunks(t *testing.T) {
	b, long := bigLog()
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o666))

	var got []Entry
	l, err := Scan(path, func(e *Entry) { got = append(got, *e) })
	require.NoError(t, err)
	want, last, torn := reference(t, b.Bytes())
	require.Greater(t, len(want), 1000)
	assert.Equal(t, want, got)
	p := readPlainly(b.Bytes())
	assert.Equal(t, len(p.damaged), l.Damaged())
	assert.Equal(t, p.damaged[:maxDamage], linesOf(l.Damage()))
	assert.Equal(t, last, l.LastSeq())
	assert.Equal(t, torn, l.Torn())
	assert.True(t, l.Torn())
	labels := 0
	for _, e := range got {
		if e.Label != nil {
			labels++
			assert.Equal(t, long, *e.Label, "the line longer than a chunk")
		}
	}
	assert.Equal(t, 1, labels)
}

// Tail reads through a reused buffer too: what it hands out stays true
// after the read, and a second call goes on where the first stopped.
func TestTail_RecordsOwnTheirStringsAcrossChunks(t *testing.T) {
	b, _ := bigLog()
	path := filepath.Join(t.TempDir(), "log.jsonl")
	data := b.Bytes()
	half := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	require.NoError(t, os.WriteFile(path, data[:half], 0o666))
	tail := &Tail{Path: path}
	var got []Entry
	require.NoError(t, tail.Each(func(e *Entry) { got = append(got, *e) }))
	require.NoError(t, os.WriteFile(path, data, 0o666)) // the rest, torn tail and all
	require.NoError(t, tail.Each(func(e *Entry) { got = append(got, *e) }))
	want, last, _ := reference(t, data)
	assert.Equal(t, want, got)
	assert.Equal(t, last, tail.LastSeq())
}

// bigLog is a log many chunks long: lines cross the chunk's edges, one is
// longer than a chunk, some are damage, the last is torn.
func bigLog() (*bytes.Buffer, string) {
	var b bytes.Buffer
	seq := 0
	long := strings.Repeat("x", 3*scanChunk)
	for i := 0; b.Len() < 8*scanChunk; i++ {
		seq++
		switch {
		case i == 100:
			fmt.Fprintf(&b, `{"seq":%d,"ts":"2026-01-01T00:00:00.000Z","type":"checkpoint.taken","agent":"a%d","checkpoint":"k%d","reason":"manual","label":%q,"repos":[{"repo":".","path":"/t","commit":"c%d","skipped":[],"submodules":[]}]}`+"\n", seq, i%3, i, long, i)
		case i%97 == 0:
			b.WriteString("not json at all\n   \n")
		case i%89 == 0:
			fmt.Fprintf(&b, `{"seq":1,"ts":"x","type":"turn.started","agent":"old"}`+"\n") // out of order
		case i%2 == 0:
			fmt.Fprintf(&b, `{"seq":%d,"ts":"2026-01-01T00:00:%02d.000Z","type":"turn.started","agent":"a%d","turn":"t%d","harness_session":"s\u00e9%d"}`+"\n", seq, i%60, i%3, i, i)
		default:
			fmt.Fprintf(&b, `{"seq":%d,"ts":"2026-01-01T00:00:%02d.000Z","type":"edit.recorded","agent":"a%d","turn":"t%d","paths":["p\"%d","q/%d"],"ignored":["i%d"]}`+"\n", seq, i%60, i%3, i-1, i, i, i)
		}
	}
	b.WriteString(`{"seq":999999,"ts":"2026`) // torn
	return &b, long
}

// A log that ends in a whole line is not torn; an empty or missing one is
// empty.
func TestScan_EndsAndEmptiness(t *testing.T) {
	dir := t.TempDir()
	l, err := Scan(filepath.Join(dir, "missing"), func(*Entry) { t.Fatal("no record") })
	require.NoError(t, err)
	assert.False(t, l.Torn())
	assert.Zero(t, l.LastSeq())
	path := filepath.Join(dir, "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"seq":1,"ts":"t","type":"agent.archived","agent":"a"}`+"\n"), 0o666))
	n := 0
	l, err = Scan(path, func(*Entry) { n++ })
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, l.Torn())
	// Appending goes on after the last whole line.
	_, err = l.Append("agent.archived", map[string]string{"agent": "b"})
	require.NoError(t, err)
	es, last, torn := reference(t, must(os.ReadFile(path)))
	assert.Len(t, es, 2)
	assert.Equal(t, int64(2), last)
	assert.False(t, torn)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// A scan with LazyRepos keeps each checkpoint's repos as text that
// DecodeRepos turns into exactly what the eager scan decodes, brackets and
// escapes inside strings included; every other member is the same.
func TestScanWith_LazyReposDecodeToTheSame(t *testing.T) {
	var b bytes.Buffer
	repos := []string{
		`[{"repo":".","path":"/t","commit":"c1","head":null,"skipped":[],"submodules":[]}]`,
		`[{"repo":".","path":"/a]b[c","commit":"c2","head":"h","branch":"main","skipped":[{"path":"x\"]}","bytes":5,"reason":"too_big"}],"submodules":[{"path":"sub","commit":"c","dirty":true}]}]`,
		`[{"repo":".","path":"/t\\\"[","commit":"c3","skipped":[{"path_b64":"/w==","bytes":1,"reason":"unreadable"}],"submodules":[]}]`,
		`null`,
		`[]`,
	}
	for i, r := range repos {
		fmt.Fprintf(&b, `{"seq":%d,"ts":"t","type":"checkpoint.taken","agent":"a","checkpoint":"k%d","reason":"manual","repos":%s,"label":"after"}`+"\n", i+1, i+1, r)
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o666))

	var eager, lazy []Entry
	_, err := Scan(path, func(e *Entry) { eager = append(eager, *e) })
	require.NoError(t, err)
	_, err = ScanWith(path, ScanOptions{LazyRepos: true}, func(e *Entry) { lazy = append(lazy, *e) })
	require.NoError(t, err)
	require.Len(t, lazy, len(repos))
	require.Len(t, eager, len(repos))
	for i := range lazy {
		if repos[i] == "null" {
			assert.Empty(t, lazy[i].ReposJSON)
		} else {
			assert.Equal(t, repos[i], lazy[i].ReposJSON)
			got, err := DecodeRepos(lazy[i].ReposJSON)
			require.NoError(t, err)
			assert.Equal(t, eager[i].Repos, got, "record %d", i+1)
		}
		lazy[i].ReposJSON, lazy[i].Repos = "", eager[i].Repos
		assert.Equal(t, eager[i], lazy[i], "record %d", i+1)
	}
}
