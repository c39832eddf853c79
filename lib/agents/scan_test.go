package agents

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/journal"
)

// A fold made while the log is read (journal.Scan, one reused record) is
// the fold of the whole loaded log: Apply keeps nothing of the record it is
// given, and the windows and ignored edits it keeps are the log's.
func TestFold_WhileScanningIsTheFoldOfTheLoadedLog(t *testing.T) {
	recs := []string{
		`{"type":"agent.registered","agent":"a1","tree":"/t","isolation":"in_place","harness":"none","parent":null}`,
		`{"type":"agent.registered","agent":"a2","tree":"/t","isolation":"in_place","harness":"none","parent":"a1"}`,
		`{"type":"turn.started","agent":"a1","turn":"t1","harness_session":"s1"}`,
		taken("a1", "k1", "turn_start", "t1", "c1"),
		`{"type":"edit.recorded","agent":"a1","turn":"t1","paths":["a","b"],"ignored":["b"]}`,
		`{"type":"edit.recorded","agent":"a2","turn":"t9","paths":["x"],"ignored":["x"]}`,
		`{"type":"turn.ended","agent":"a1","turn":"t1"}`,
		taken("a1", "k2", "turn_end", "t1", "c2"),
		`{"type":"checkpoint.reused","agent":"a1","checkpoint":"k2","reason":"turn_start","turn":"t2","label":"l"}`,
		`{"type":"turn.started","agent":"a1","turn":"t2"}`,
		`{"type":"edit.recorded","agent":"a1","turn":"t2","paths":["c"],"ignored":["c","b"]}`,
		`{"type":"checkpoint.failed","agent":"a1","reason":"turn_end","code":"failed.checkpoint_git","turn":"t2"}`,
		`{"type":"turn.ended","agent":"a1","turn":"t2"}`,
		taken("a1", "k3", "turn_end", "t2", "c3"),
		`{"type":"checkpoint.pruned","agent":"a1","checkpoints":["k1"]}`,
		`{"type":"rollback.started","agent":"a1","checkpoint":"k2","safety":"k4","restore":"files","plan":"p"}`,
		`{"type":"rollback.ended","agent":"a1","checkpoint":"k2","safety":"k4","restore":"files","ok":true,"drops":["t2"]}`,
		`{"type":"agent.binding","agent":"a1","harness_session":"s2","fork_source":"s1","fork_at":"m"}`,
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var text strings.Builder
	for i, r := range recs {
		text.WriteString(`{"seq":` + itoa(i+1) + `,"ts":"2026-01-01T00:00:00.000Z",` + strings.TrimPrefix(r, "{") + "\n")
	}
	require.NoError(t, os.WriteFile(path, []byte(text.String()), 0o666))

	l, err := journal.Load(path)
	require.NoError(t, err)
	require.Len(t, l.Entries, len(recs))
	want := Fold(l.Entries)
	got := New()
	_, err = journal.Scan(path, got.Apply)
	require.NoError(t, err)

	assert.Equal(t, want, got)
	a := got.Agent("a1")
	require.NotNil(t, a)
	assert.Equal(t, "k2", a.Checkpoint("k2").Checkpoint, "a checkpoint keeps its own record, not the last one read")
	assert.Equal(t, "l", *a.Checkpoint("k2").Label)
	assert.Equal(t, "s2", a.Binding.Session)
	assert.Equal(t, []string{"b", "c"}, got.IgnoredEditsAfter("a1", 0))
	assert.Equal(t, []string{"b", "c"}, got.IgnoredEditsAfter("a1", 5), "the second edit is after seq 5")
	assert.Equal(t, []string{}, got.IgnoredEditsAfter("a1", 11))
	assert.Equal(t, []string{"x"}, got.IgnoredEditsAfter("a2", 0), "an edit of an unknown turn still counts")
	var seqs []int64
	for _, c := range got.Captures("/t") {
		seqs = append(seqs, c.Seq)
	}
	assert.Equal(t, []int64{4, 8, 9, 12, 14}, seqs)
	assert.Equal(t, "", got.Captures("/t")[0].Commit, "k1 was pruned: a barrier")
	assert.Equal(t, "c2", got.Captures("/t")[1].Commit)

	// A fold with repos kept as text (state's reads) is the same once
	// DecodeRepos ran, but for the pruned k1, which keeps none.
	lazy := New()
	_, err = journal.ScanWith(path, journal.ScanOptions{LazyRepos: true}, lazy.Apply)
	require.NoError(t, err)
	lazy.DecodeRepos()
	require.Nil(t, lazy.Agent("a1").Checkpoint("k1").Repos)
	lazy.Agent("a1").Checkpoint("k1").Repos = want.Agent("a1").Checkpoint("k1").Repos
	assert.Equal(t, want, lazy)
}

func itoa(i int) string { return strconv.Itoa(i) }
