package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzTranscript reads any bytes as a transcript, backwards, with small
// caps so that every edge of the block, line, total and lines limits is met. The
// reader must give exactly the file's lines, last first, or a prefix of
// them and ErrTooLarge when (and only when) a cap is met; never a line
// over the cap, never more bytes read than the caps allow. lastEntry, with
// caps too large to meet, must agree with a forward reading of the file.
func FuzzTranscript(f *testing.F) {
	for _, name := range []string{synthID + ".jsonl", "real-2.1.332-7ed25220-ebd9-4d8a-a85d-0225263a02da.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(fixtures, name)); err == nil {
			f.Add(b, "", uint16(4096), uint16(8192), uint16(60000), uint16(0), uint16(1000))
			f.Add(b, "41f3c8a5-2d6e-4f70-8b19-3c5d7e9f0a12", uint16(7), uint16(2000), uint16(9000), uint16(3), uint16(1000))
		}
	}
	f.Add([]byte("a\n\n  b  \nc"), "", uint16(1), uint16(1), uint16(10), uint16(0), uint16(1000))
	f.Add([]byte("\n\n\n"), "", uint16(2), uint16(0), uint16(1), uint16(0), uint16(1000))
	f.Add(make([]byte, 300), "", uint16(16), uint16(64), uint16(200), uint16(0), uint16(1000))
	f.Add([]byte(`{"type":"user","uuid":"u1","promptId":"p","message":{"content":"hi"}}`+"\n"+
		`{"type":"assistant","uuid":"u2","version":"1"}`+"\n"), "p", uint16(5), uint16(100), uint16(500), uint16(1), uint16(1000))
	f.Fuzz(func(t *testing.T, data []byte, before string, block, line, total, stopAt, lines uint16) {
		lim := limits{block: 1 + int(block)%512, line: int(line) % 1024, total: int64(total) % 4096,
			lines: int(lines) % 1024}
		r := &countingReader{r: bytes.NewReader(data)}
		want := forwardLines(data)
		var got [][]byte
		stop := int(stopAt) % 8 // 0: read to the start
		err := backwards(context.Background(), r, int64(len(data)), lim, func(l []byte) bool {
			require.LessOrEqual(t, len(l), lim.line, "a line over the cap")
			got = append(got, bytes.Clone(l))
			return stop == 0 || len(got) < stop
		})
		require.LessOrEqual(t, len(got), len(want))
		require.LessOrEqual(t, len(got), lim.lines, "more lines than the cap")
		for i := range got {
			require.Equal(t, string(want[i]), string(got[i]), "line %d from the end", i)
		}
		assert.LessOrEqual(t, r.read, int64(len(data)), "a byte read twice")
		assert.Less(t, r.read, lim.total+int64(lim.block), "read past the total cap")
		switch {
		case err != nil:
			require.ErrorIs(t, err, ErrTooLarge)
			assert.True(t, int64(len(data)) > lim.total || longestLine(data) > lim.line || len(want) > lim.lines,
				"ErrTooLarge with no cap met")
		case stop > 0 && len(got) == stop:
		default:
			assert.Equal(t, len(want), len(got), "lines missing without an error")
		}

		// The answer, with caps no file here meets, is the forward one.
		big := limits{block: lim.block, line: 1 << 30, total: 1 << 40, lines: 1 << 30}
		e, err := lastEntry(context.Background(), bytes.NewReader(data), int64(len(data)), big, before)
		fe, ferr := forwardLastEntry(data, before)
		require.Equal(t, ferr, err)
		require.Equal(t, fe, e)
	})
}

type countingReader struct {
	r    *bytes.Reader
	read int64
}

func (c *countingReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.read += int64(n)
	return n, err
}

// forwardLines are the file's non-blank lines, trimmed, last first.
func forwardLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	slices.Reverse(out)
	return out
}

func longestLine(data []byte) int {
	n := 0
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		n = max(n, len(l))
	}
	return n
}

// forwardLastEntry is docs/checkpoints.md#retention-and-clean's harness_end read front to back: the lines
// of the turn (those ahead of the last prompt line of before's prompt id,
// or all when that prompt is not written yet, from the last prompt line on),
// and in them the last assistant line, else the last anchorable line.
func forwardLastEntry(data []byte, before string) (End, error) {
	var lines []Line
	for _, raw := range bytes.Split(data, []byte{'\n'}) {
		var l Line
		if raw = bytes.TrimSpace(raw); len(raw) > 0 && json.Unmarshal(raw, &l) == nil && l.anchorable() {
			lines = append(lines, l)
		}
	}
	if before != "" {
		for i := len(lines) - 1; i >= 0; i-- {
			if lines[i].isPrompt() && lines[i].PromptID == before {
				lines = lines[:i]
				break
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].isPrompt() {
			lines = lines[i:]
			break
		}
	}
	if len(lines) == 0 {
		return End{}, ErrNoEntry
	}
	l := lines[len(lines)-1]
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Type == "assistant" {
			l = lines[i]
			break
		}
	}
	return End{UUID: *l.UUID, Version: l.Version}, nil
}

func TestLastEntry_RefusesWhatIsNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "t.jsonl")
	require.NoError(t, mkfifo(fifo))
	_, err := LastEntry(context.Background(), fifo, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "FIFO")
}

func TestLastEntry_GivesUpOnALineOverTheCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(hookLimits.line)+1)) // one line of zeros, no newline
	require.NoError(t, f.Close())
	_, err = LastEntry(context.Background(), p, "")
	require.True(t, errors.Is(err, ErrTooLarge), "%v", err)
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// FuzzEachLine: the streaming reader explain and resolve use gives the
// file's non-blank lines, trimmed, in order, as splitting it whole does,
// tiny lines and lines past its 64 KiB buffer included.
func FuzzEachLine(f *testing.F) {
	f.Add([]byte("{}\n{}\n\n  {}  \r\n{}"))
	f.Add([]byte(strings.Repeat("{}\n", 5000)))
	f.Add([]byte("a\n" + strings.Repeat("x", 70<<10) + "\nb\n"))
	f.Add([]byte(strings.Repeat("y", 140<<10)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		var got [][]byte
		require.NoError(t, eachLine(path, func(l []byte) bool {
			got = append(got, bytes.Clone(l))
			return true
		}))
		want := forwardLines(data)
		slices.Reverse(want)
		require.Equal(t, len(want), len(got))
		for i := range want {
			require.Equal(t, string(want[i]), string(got[i]), "line %d", i)
		}
	})
}
