package state

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
)

// The log's first records, as writers leave them: agent a1 registered and
// one checkpoint taken.
var twoRecords = []string{
	`{"seq":1,"ts":"2026-11-30T12:00:00.000Z","type":"agent.registered","agent":"a1","tree":"/t","isolation":"in_place","harness":"none","parent":null}`,
	`{"seq":2,"ts":"2026-11-30T12:00:00.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k1","reason":"manual","turn":null,"through_turn":null,"at":"2026-11-30T12:00:00.000Z","mid_turn":false,"overlap":false,"repos":[]}`,
}

// fileRecords are the log file's records, as its lines say.
func fileRecords(t *testing.T, s *Store) []map[string]any {
	t.Helper()
	f, err := os.Open(s.Repo.Log)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	return out
}

// A torn tail (bytes after the last newline, a crash mid-write) is not
// damage: reads pass over it, and the next writer cuts it before it
// appends, so the file is whole lines again.
func TestFold_TornTailCutByTheNextWriter(t *testing.T) {
	s := newStore(t)
	writeLog(t, s, twoRecords)
	// Longer than the record that replaces it: not merely written over.
	appendLog(t, s, `{"seq":3,"ts":"2026-11-30T12:00:00.000Z","type":"checkpoint.taken","agent":"a1","label":"`+
		strings.Repeat("x", 200))
	called := false
	s.Damaged = func(*journal.Log) { called = true }
	l, st, err := s.Read()
	require.NoError(t, err)
	assert.Zero(t, l.Damaged())
	assert.True(t, l.Torn())
	assert.False(t, called, "a torn tail is not reported as damage")
	assert.Equal(t, int64(2), l.LastSeq())
	require.NotNil(t, st.Agents["a1"])
	assert.Len(t, st.Agents["a1"].Checkpoints, 1)

	tx, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err)
	_, err = tx.Append(journal.AgentArchived, journal.Archived{Agent: "a1"})
	require.NoError(t, err)
	tx.End()
	data, err := os.ReadFile(s.Repo.Log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 3, "%s", data)
	assert.Equal(t, twoRecords, lines[:2])
	assert.True(t, strings.HasPrefix(lines[2], `{"seq":3,`), lines[2])
	assert.Contains(t, lines[2], `"type":"agent.archived"`)
	assert.True(t, strings.HasSuffix(string(data), "\n"))
}

// Damage inside the log (a whole line that is not a record in order) is
// reported once per read through Damaged, the records around it are still
// folded, the line is never rewritten, and a writer goes on above every
// seq a line claims. Work that must not trust it is refused (Intact).
func TestFold_DamageInsideReportedSparedAndKept(t *testing.T) {
	s := newStore(t)
	bad := `{"seq":3,"ts":"2026-11-30T12:00:00.000Z","checkpoint":"k2"}` // its type lost
	third := strings.Replace(strings.Replace(twoRecords[1], `"seq":2`, `"seq":4`, 1), `"k1"`, `"k3"`, 1)
	writeLog(t, s, []string{twoRecords[0], twoRecords[1], bad, third})
	var seen []int64
	s.Damaged = func(l *journal.Log) {
		for _, d := range l.Damage() {
			seen = append(seen, d.Line)
		}
	}
	l, st, err := s.Read()
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, seen, "the damaged line, by its number")
	assert.Equal(t, journal.LineIncomplete, l.Damage()[0].Kind)
	assert.Len(t, st.Agents["a1"].Checkpoints, 2, "the records after the damage are folded")

	err = Intact(l, "no rollback runs")
	e, ok := errcode.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errcode.FailedState, e.Code)
	assert.Contains(t, e.Error(), "line 3")
	assert.Contains(t, e.Error(), "no rollback runs until it is mended")
	assert.Equal(t, []int64{3}, e.Data.(map[string]any)["lines"])

	tx, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err)
	entry, err := tx.Append(journal.AgentArchived, journal.Archived{Agent: "a1"})
	require.NoError(t, err)
	tx.End()
	assert.Equal(t, int64(5), entry.Seq)
	data, err := os.ReadFile(s.Repo.Log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, bad, lines[2], "the damaged line is left as it was")
	assert.True(t, strings.HasPrefix(lines[4], `{"seq":5,`), lines[4])
	assert.Nil(t, Intact(&journal.Log{}, "x"), "an undamaged log is intact")
}

// A rollback whose process died (started, never ended) is settled by the
// next lock holder: rollback.ended {ok: false, failed.rollback_interrupted},
// once.
func TestBegin_SettlesAnInterruptedRollbackOnce(t *testing.T) {
	s := newStore(t)
	writeLog(t, s, append(append([]string(nil), twoRecords...),
		`{"seq":3,"ts":"2026-11-30T12:00:00.000Z","type":"rollback.started","agent":"a1","checkpoint":"k1","safety":"k2","restore":"files","plan":"p1"}`))
	for range 2 {
		tx, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
		require.NoError(t, err)
		assert.Nil(t, tx.State.Agents["a1"].OpenRollback)
		tx.End()
	}
	recs := fileRecords(t, s)
	require.Len(t, recs, 4, "settled once")
	end := recs[3]
	assert.Equal(t, "rollback.ended", end["type"])
	assert.Equal(t, false, end["ok"])
	assert.Equal(t, string(errcode.FailedRollbackInterrupted), end["code"])
	assert.Equal(t, "k1", end["checkpoint"])
	assert.Equal(t, "k2", end["safety"])
	assert.Equal(t, "files", end["restore"])
}

// While one command holds the lock, another's Begin waits until its
// context ends and fails with the code it was given, naming the holder; a
// temporary file left in tmp/ is removed by the next holder and at End.
func TestBegin_WaitsForTheLockThenTimesOut(t *testing.T) {
	s := newStore(t)
	tx, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = s.Begin(ctx, lockHolder(), errcode.TimeoutCheckpoint)
	e, ok := errcode.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errcode.TimeoutCheckpoint, e.Code)
	assert.Contains(t, strings.Join(e.Hints, "\n"), "held by")

	require.NoError(t, os.MkdirAll(s.TmpDir(), 0o755))
	left := filepath.Join(s.TmpDir(), "index.lock")
	require.NoError(t, os.WriteFile(left, nil, 0o644))
	tx.End()
	assert.NoFileExists(t, left)
	tx, err = s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err, "free again once released")
	tx.End()
}

// A log that cannot be read is failed.state with the reason: a folder in
// its place, or a link, which is neither followed nor written through.
func TestRead_UnreadableLogSaysWhy(t *testing.T) {
	s := newStore(t)
	require.NoError(t, os.Mkdir(s.Repo.Log, 0o755))
	_, _, err := s.Read()
	e, ok := errcode.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errcode.FailedState, e.Code)
	assert.Contains(t, e.Error(), "cannot read "+s.Repo.Log+": ")
	assert.Contains(t, e.Error(), "directory")

	s = newStore(t)
	elsewhere := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(elsewhere, []byte(strings.Join(twoRecords, "\n")+"\n"), 0o644))
	require.NoError(t, os.Symlink(elsewhere, s.Repo.Log))
	_, _, err = s.Read()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "neither followed nor written through")
	_, err = s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.Error(t, err)
	data, rerr := os.ReadFile(elsewhere)
	require.NoError(t, rerr)
	assert.Equal(t, strings.Join(twoRecords, "\n")+"\n", string(data), "nothing written through the link")
}
