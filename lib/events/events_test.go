package events

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
)

// The records of a turn, an edit (internal) and a rollback, as writers
// leave them in log.jsonl.
var records = []string{
	`{"seq":1,"ts":"2026-11-30T12:00:00.000Z","type":"agent.registered","agent":"a1","tree":"/t","isolation":"in_place","harness":"none","parent":null}`,
	`{"seq":2,"ts":"2026-11-30T12:00:01.000Z","type":"turn.started","agent":"a1","turn":"t1"}`,
	`{"seq":3,"ts":"2026-11-30T12:00:02.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k1","reason":"turn_start","turn":"t1","through_turn":null,"at":"2026-11-30T12:00:02.000Z","mid_turn":false,"overlap":false,"repos":[{"repo":".","path":"/t","commit":"1111111111111111111111111111111111111111","head":null,"skipped":[],"submodules":[]}]}`,
	`{"seq":4,"ts":"2026-11-30T12:00:03.000Z","type":"edit.recorded","agent":"a1","turn":"t1","paths":["a"],"ignored":[]}`,
	`{"seq":5,"ts":"2026-11-30T12:00:04.000Z","type":"turn.ended","agent":"a1","turn":"t1"}`,
	`{"seq":6,"ts":"2026-11-30T12:00:05.000Z","type":"rollback.started","agent":"b1","checkpoint":"k1","safety":"k2","restore":"files","plan":"p1"}`,
	`{"seq":7,"ts":"2026-11-30T12:00:06.000Z","type":"rollback.ended","agent":"b1","checkpoint":"k1","safety":"k2","restore":"files","ok":false,"code":"failed.rollback_undone"}`,
}

func writeLog(t *testing.T, lines ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "log.jsonl")
	require.NoError(t, os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return dir, log
}

func lines(t *testing.T, evs []Event) []string {
	t.Helper()
	out := []string{}
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

func allEvents() *Filter { f, _ := ParseFilter("", ""); return f }

// Each published record becomes one event of docs/json.md#events's shape,
// its seq and ts the record's; internal records (registration, edits) none.
func TestStream_RecordsToEvents(t *testing.T) {
	dir, log := writeLog(t, records...)
	evs, err := NewStream(log, dir, "venom/s", allEvents(), 0).Next()
	require.NoError(t, err)
	assert.Equal(t, []string{
		`{"seq":2,"ts":"2026-11-30T12:00:01.000Z","source":"venom/s","type":"agent.turn_started","data":{"agent":"a1","turn":"t1"}}`,
		`{"seq":3,"ts":"2026-11-30T12:00:02.000Z","source":"venom/s","type":"agent.checkpoint","data":{"agent":"a1","checkpoint":"k1","reason":"turn_start","turn":"t1","through_turn":null,"repos":[{"repo":".","commit":"1111111111111111111111111111111111111111"}]}}`,
		`{"seq":5,"ts":"2026-11-30T12:00:04.000Z","source":"venom/s","type":"agent.turn_ended","data":{"agent":"a1","turn":"t1","no_start":false,"no_end":false}}`,
		`{"seq":6,"ts":"2026-11-30T12:00:05.000Z","source":"venom/s","type":"agent.rollback_started","data":{"agent":"b1","checkpoint":"k1","safety":"k2","restore":"files"}}`,
		`{"seq":7,"ts":"2026-11-30T12:00:06.000Z","source":"venom/s","type":"agent.rollback_ended","data":{"agent":"b1","checkpoint":"k1","safety":"k2","restore":"files","ok":false,"code":"failed.rollback_undone"}}`,
	}, lines(t, evs))
}

// A stream starts after since, returns only what was appended since the
// last call, and a line still being written (a torn tail) only once whole.
func TestStream_SinceAndAppendsAcrossATornTail(t *testing.T) {
	dir, log := writeLog(t, records[:3]...)
	s := NewStream(log, dir, "venom/s", allEvents(), 2)
	evs, err := s.Next()
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, int64(3), evs[0].Seq)

	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	half := len(records[4]) / 2
	_, err = f.WriteString(records[3] + "\n" + records[4][:half])
	require.NoError(t, err)
	evs, err = s.Next()
	require.NoError(t, err)
	assert.Empty(t, evs, "the edit is internal, and the turn's end is not whole yet")
	_, err = f.WriteString(records[4][half:] + "\n")
	require.NoError(t, err)
	evs, err = s.Next()
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "agent.turn_ended", evs[0].Type)
	evs, err = s.Next()
	require.NoError(t, err)
	assert.Empty(t, evs, "nothing twice")
}

// Follow wakes for a record appended while it waits, and ends cleanly
// with its context.
func TestStream_FollowSeesAnAppend(t *testing.T) {
	dir, log := writeLog(t, records[:2]...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan Event, 10)
	done := make(chan error, 1)
	go func() {
		done <- NewStream(log, dir, "venom/s", allEvents(), 2).Follow(ctx, func(ev Event) error {
			got <- ev
			return nil
		})
	}()
	time.Sleep(100 * time.Millisecond)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(records[2] + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	select {
	case ev := <-got:
		assert.Equal(t, int64(3), ev.Seq)
	case <-ctx.Done():
		t.Fatal("the appended record never came")
	}
	cancel()
	assert.NoError(t, <-done)
}

func TestFilter_TypesAndResources(t *testing.T) {
	dir, log := writeLog(t, records...)
	seqs := func(types, resources string) []int64 {
		t.Helper()
		f, err := ParseFilter(types, resources)
		require.NoError(t, err)
		evs, err := NewStream(log, dir, "s", f, 0).Next()
		require.NoError(t, err)
		out := []int64{}
		for _, ev := range evs {
			out = append(out, ev.Seq)
		}
		return out
	}
	assert.Equal(t, []int64{2, 3, 5, 6, 7}, seqs("*", ""))
	assert.Equal(t, []int64{2, 3, 5, 6, 7}, seqs("agent.*", ""))
	assert.Equal(t, []int64{3}, seqs("agent.checkpoint", ""), "an exact name is not a prefix")
	assert.Equal(t, []int64{6, 7}, seqs(`["agent.rollback_started", "agent.rollback_ended"]`, ""))
	assert.Equal(t, []int64{2, 5}, seqs(" agent.turn_started , agent.turn_ended ,", ""))
	assert.Equal(t, []int64{6, 7}, seqs("", "agent:b1"))
	assert.Equal(t, []int64{3}, seqs("agent.checkpoint", `["agent:a1","agent:zz"]`))
	assert.Equal(t, []int64{}, seqs("", "agent:zz"))

	for _, bad := range []struct{ types, resources string }{
		{"agent.rollback_*", ""}, // a prefix ends in .*
		{"agent.checkpoints", ""},
		{"nothing.*", ""},
		{`["agent.checkpoint"`, ""},
		{"", "a1"},
		{"", "agent:"},
		{"", `[1]`},
	} {
		_, err := ParseFilter(bad.types, bad.resources)
		e, ok := errcode.As(err)
		require.True(t, ok, "%v: %v", bad, err)
		assert.Equal(t, errcode.InvalidParamsFilter, e.Code, "%v", bad)
	}
	_, err := ParseFilter("agent.checkpoints", "")
	e, _ := errcode.As(err)
	assert.Contains(t, e.Data.(map[string]any)["known"], "agent.checkpoints_pruned", "a typo is answered with the types")
}

// The source id is made once, a version 4 uuid, and every process that
// asks, at once or later, gets the same.
func TestSource_OneIDWhoeverAsksFirst(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := Source(dir)
			assert.NoError(t, err)
			ids[i] = id
		}()
	}
	wg.Wait()
	assert.Regexp(t, regexp.MustCompile(`^venom/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`), ids[0])
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	again, err := Source(dir)
	require.NoError(t, err)
	assert.Equal(t, ids[0], again)
	left, err := filepath.Glob(filepath.Join(dir, "source-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file left behind")
}
