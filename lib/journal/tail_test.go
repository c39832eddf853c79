package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func seqsOf(es []Entry) []int64 {
	out := []int64{}
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

func TestTail_WholeLinesOnceAcrossATornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, err := Load(path)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		_, err := l.Append("turn.started", map[string]string{"agent": "a1"})
		require.NoError(t, err)
	}
	tail := &Tail{Path: path}
	got, err := tail.Next()
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3}, seqsOf(got))

	// A crash leaves half a line: nothing to read yet.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, _ = f.WriteString(`{"seq":4,"ts":"x","type":"turn.st`)
	f.Close()
	got, err = tail.Next()
	require.NoError(t, err)
	assert.Empty(t, got)

	// The next writer cuts it and appends seq 4 for real.
	l, err = Load(path)
	require.NoError(t, err)
	_, err = l.Append("checkpoint.taken", map[string]string{"agent": "a1", "checkpoint": "k1"})
	require.NoError(t, err)
	got, err = tail.Next()
	require.NoError(t, err)
	require.Equal(t, []int64{4}, seqsOf(got))
	assert.Equal(t, "k1", got[0].Checkpoint)

	// A file replaced under the reader is read again, each seq once.
	data, _ := os.ReadFile(path)
	require.NoError(t, os.WriteFile(path+".new", append(data[:0:0], data...), 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	l, _ = Load(path)
	_, _ = l.Append("turn.ended", map[string]string{"agent": "a1"})
	got, err = tail.Next()
	require.NoError(t, err)
	assert.Equal(t, []int64{5}, seqsOf(got))

	// Want skips types from their first bytes, and SkipThrough skips seqs.
	w := &Tail{Path: path, Want: func(t string) bool { return t == "checkpoint.taken" }}
	got, _ = w.Next()
	assert.Equal(t, []int64{4}, seqsOf(got))
	s := &Tail{Path: path}
	s.SkipThrough(3)
	got, _ = s.Next()
	assert.Equal(t, []int64{4, 5}, seqsOf(got))
}

func TestPeek(t *testing.T) {
	seq, typ, ok := peek([]byte(`{"seq":12,"ts":"2026-11-30T00:00:00.000Z","type":"checkpoint.taken","agent":"a"}`))
	assert.True(t, ok)
	assert.Equal(t, int64(12), seq)
	assert.Equal(t, "checkpoint.taken", typ)
	_, _, ok = peek([]byte(`{"type":"x","seq":1}`))
	assert.False(t, ok)
}
