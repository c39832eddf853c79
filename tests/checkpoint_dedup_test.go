package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckpoint_DedupWhenTreeAndHeadAreTheSame(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	require.Equal(t, "k1", *env.Take(t, "--agent=a1").Checkpoint)
	refs := env.VenomRefs()

	for _, reason := range []string{"manual", "turn_start", "turn_end", "takeover", "takeback"} {
		res := env.Take(t, "--agent=a1", "--reason="+reason)
		assert.Equal(t, TakeResult{Agent: "a1", Checkpoint: res.Checkpoint, Reused: true, Skipped: []SkippedPath{}}, res, reason)
		assert.Equal(t, "k1", *res.Checkpoint, reason)
		assert.Equal(t, refs, env.VenomRefs(), "%s made a ref", reason)
	}
	reused := env.Records("checkpoint.reused")
	require.Len(t, reused, 5)
	for _, r := range reused {
		assert.Equal(t, "a1", r["agent"])
		assert.Equal(t, "k1", r["checkpoint"])
	}
	assert.Equal(t, "t1", reused[1]["turn"], "turn_start opened t1")
	assert.Equal(t, "t1", reused[2]["turn"], "turn_end closed t1")
	assert.Nil(t, reused[0]["turn"])
	// checkpoint.reused is internal: list shows k1 once.
	require.Len(t, env.List(t, "--agent=a1").Checkpoints, 1)

	// A new commit with the same tree moves HEAD: not the same state.
	env.Git("add", "a.txt")
	env.Git("commit", "-q", "-m", "commit the edit")
	res := env.Take(t, "--agent=a1")
	require.False(t, res.Reused)
	require.Equal(t, "k2", *res.Checkpoint)
	require.Equal(t, env.CheckpointTree("a1", 1), env.CheckpointTree("a1", 2))
	require.Equal(t, env.Git("rev-parse", "HEAD"), env.Git("rev-parse", "refs/venom/checkpoints/a1/2^"))

	// Staging alone changes no tree and no HEAD: reused.
	env.Write("a.txt", "y\n")
	require.Equal(t, "k3", *env.Take(t, "--agent=a1").Checkpoint)
	env.Git("add", "a.txt")
	res = env.Take(t, "--agent=a1")
	require.True(t, res.Reused)
	require.Equal(t, "k3", *res.Checkpoint)

	// Back to an older tree is not a reuse of the older checkpoint: only the
	// latest counts.
	env.Write("a.txt", "x\n")
	res = env.Take(t, "--agent=a1")
	require.False(t, res.Reused)
	require.Equal(t, "k4", *res.Checkpoint)
}

func TestCheckpoint_LabelOnReuse(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	res := env.Take(t, "--agent=a1", "--label=before the risky part")
	require.True(t, res.Reused)
	it := env.Item(t, "a1", "k1")
	require.NotNil(t, it.Label)
	require.Equal(t, "before the risky part", *it.Label)
	reused := env.Records("checkpoint.reused")
	require.Len(t, reused, 1)
	require.Equal(t, "before the risky part", reused[0]["label"])

	// A later label is the newest, the earlier one stays; a reuse
	// without --label changes neither.
	env.Take(t, "--agent=a1", "--label=renamed")
	env.Take(t, "--agent=a1")
	require.Equal(t, "renamed", *env.Item(t, "a1", "k1").Label)
	require.Equal(t, []string{"before the risky part", "renamed"}, env.Item(t, "a1", "k1").Labels)

	// A new checkpoint carries its own label in its record.
	env.Write("a.txt", "new\n")
	env.Take(t, "--agent=a1", "--label=fresh")
	require.Equal(t, "fresh", *env.Item(t, "a1", "k2").Label)
	require.Equal(t, "renamed", *env.Item(t, "a1", "k1").Label)
	taken := env.Records("checkpoint.taken")
	require.Equal(t, "fresh", taken[1]["label"])
	// An unlabelled checkpoint has no label member in the listing.
	env.Write("a.txt", "newer\n")
	env.Take(t, "--agent=a1")
	r := env.Venom("checkpoint", "list", "--agent=a1", "--limit=1", "--json").OK(t)
	require.NotContains(t, r.Stdout, `"label"`)
}

// turnRow is what the listing says of one checkpoint's turn fields.
type turnRow struct {
	id, reason, turn, through string
	mid                       bool
}

func rowsOf(l ListResult) []turnRow {
	var out []turnRow
	for i := len(l.Checkpoints) - 1; i >= 0; i-- {
		c := l.Checkpoints[i]
		r := turnRow{id: c.Checkpoint, reason: c.Reason, turn: "-", through: "-", mid: c.MidTurn}
		if c.Turn != nil {
			r.turn = *c.Turn
		}
		if c.ThroughTurn != nil {
			r.through = *c.ThroughTurn
		}
		out = append(out, r)
	}
	return out
}

func TestCheckpoint_TurnsAndThroughTurn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	step := 0
	take := func(args ...string) TakeResult {
		step++
		env.Write("a.txt", "state "+itoa(step)+"\n") // every capture is new
		return env.Take(t, append([]string{"--agent=a1"}, args...)...)
	}
	take()                                   // k1 manual, no turn yet
	take("--reason=turn_start")              // k2 opens t1
	take()                                   // k3 mid-turn manual in t1
	take("--reason=turn_end")                // k4 closes t1
	take("--reason=turn_start")              // k5 opens t2
	take("--reason=turn_end", "--turn=t2")   // k6 closes t2, named
	take("--reason=turn_end")                // k7 a turn with no turn_start: t3
	take("--reason=turn_start", "--turn=t7") // k8 opens t7 (numbers may jump)
	take("--reason=turn_start")              // k9 t7 never ended: it ends, t8 opens
	take("--reason=takeover")                // k10
	take("--reason=takeback")                // k11
	take("--reason=turn_end")                // k12 closes t8

	// docs/checkpoints.md#turns-and-through_turn: through_turn is the last turn ended when the checkpoint was
	// taken; a turn_end's own turn has ended by then.
	want := []turnRow{
		{"k1", "manual", "-", "-", false},
		{"k2", "turn_start", "t1", "-", false},
		{"k3", "manual", "t1", "-", true},
		{"k4", "turn_end", "t1", "t1", false},
		{"k5", "turn_start", "t2", "t1", false},
		{"k6", "turn_end", "t2", "t2", false},
		{"k7", "turn_end", "t3", "t3", false},
		{"k8", "turn_start", "t7", "t3", false},
		{"k9", "turn_start", "t8", "t7", false},
		{"k10", "takeover", "-", "t7", false},
		{"k11", "takeback", "-", "t7", false},
		{"k12", "turn_end", "t8", "t8", false},
	}
	require.Equal(t, want, rowsOf(env.List(t, "--agent=a1")))

	var ended, started []string
	for _, r := range env.Records("turn.ended") {
		ended = append(ended, r["turn"].(string))
	}
	for _, r := range env.Records("turn.started") {
		started = append(started, r["turn"].(string))
	}
	require.Equal(t, []string{"t1", "t2", "t7", "t8"}, started)
	require.Equal(t, []string{"t1", "t2", "t3", "t7", "t8"}, ended)
	require.Equal(t, true, env.Records("turn.ended")[2]["no_start"], "t3 had no turn_start")
	// The trailers carry the turn too.
	require.Contains(t, env.Git("log", "-1", "--format=%B", "refs/venom/checkpoints/a1/3"), "Venom-Turn: t1")
	require.NotContains(t, env.Git("log", "-1", "--format=%B", "refs/venom/checkpoints/a1/10"), "Venom-Turn")
}

func TestCheckpoint_DedupAcrossTurns(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	env.Take(t, "--agent=a1", "--reason=turn_start") // k1 t1
	env.Write("a.txt", "y\n")
	env.Take(t, "--agent=a1", "--reason=turn_end") // k2 t1
	// The usual case of docs/checkpoints.md#reuse: the next turn_start finds what turn_end left.
	res := env.Take(t, "--agent=a1", "--reason=turn_start")
	require.True(t, res.Reused)
	require.Equal(t, "k2", *res.Checkpoint)
	reused := env.Records("checkpoint.reused")
	require.Len(t, reused, 1)
	require.Equal(t, "turn_start", reused[0]["reason"])
	require.Equal(t, "t2", reused[0]["turn"], "the reuse still opens t2")
	// The turn opened all the same: the next turn_end closes t2.
	env.Write("a.txt", "z\n")
	env.Take(t, "--agent=a1", "--reason=turn_end")
	it := env.Item(t, "a1", "k3")
	require.Equal(t, "t2", *it.Turn)
	require.Equal(t, "t2", *it.ThroughTurn)
	// Agents do not share dedup: another agent's first capture of the same
	// state is its own k1.
	res = env.Take(t, "--agent=b2")
	require.False(t, res.Reused)
	require.Equal(t, "k1", *res.Checkpoint)
	require.Equal(t, env.CheckpointTree("a1", 3), env.CheckpointTree("b2", 1))
}
