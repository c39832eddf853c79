package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
)

// list --agent reads only that agent's records (state.ReadAgent). Its
// output must be what the fold of the whole log gives, with another agent's
// turns, captures, labels and prunes between the agent's own.
func TestList_ReadsOnlyTheAgentsRecords(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "venom.keep", "3")
	for i := 0; i < 6; i++ {
		env.Write("a.txt", fmt.Sprintf("a %d\n", i))
		env.Take(t, "--agent=a1", "--reason=turn_start")
		env.Write("b.txt", fmt.Sprintf("b %d\n", i))
		env.Take(t, "--agent=a2", "--reason=turn_start")
		env.Write("a.txt", fmt.Sprintf("a %d done\n", i))
		env.Take(t, "--agent=a1", "--reason=turn_end", fmt.Sprintf("--label=one %d", i))
		env.Take(t, "--agent=a2", "--reason=turn_end")
		env.Take(t, "--agent=a2", "--label=by hand")
	}
	r, err := repo.Open(context.Background(), env.Dir, env.Environ())
	require.NoError(t, err)
	defer r.Free()
	s := &state.Store{Repo: r, Config: config.Defaults(), Environ: env.Environ()}
	_, full, err := s.Read()
	require.NoError(t, err)
	for _, id := range []string{"a1", "a2"} {
		a, err := full.Named(id)
		require.NoError(t, err)
		l, err := checkpoints.List(r, a, checkpoints.Filter{Limit: 50})
		require.NoError(t, err)
		l.Pending = checkpoints.Pending(s, id)
		want, err := json.Marshal(l)
		require.NoError(t, err)
		require.Greater(t, len(l.Checkpoints), 1)

		got := env.Venom("checkpoint", "list", "--agent="+id, "--json").OK(t).Stdout
		require.JSONEq(t, string(want), got, "list --agent=%s differs from the whole log's fold", id)

		own, err := s.ReadAgent(id)
		require.NoError(t, err)
		b, err := own.Named(id)
		require.NoError(t, err)
		require.Equal(t, a.State, b.State)
		require.Equal(t, len(a.Turns), len(b.Turns))
		require.Equal(t, len(a.Checkpoints), len(b.Checkpoints))
	}
}

// A listing cut by --limit says how many are left and the
// command that lists them, which works as printed; a turn the agent never
// had is not_found.checkpoint, as git venom-diff t9 says, not an empty list.
func TestList_MoreAndUnknownTurn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for i := 1; i <= 5; i++ {
		env.Write("a.txt", fmt.Sprintf("%d\n", i))
		env.Take(t, "--agent=a1")
	}
	l := env.List(t, "--agent=a1", "--limit=2")
	require.Equal(t, []string{"k5", "k4"}, listIDs(l))
	assert.Equal(t, 3, l.MoreCount)
	assert.Equal(t, 0, env.List(t, "--agent=a1").MoreCount)

	out := env.Venom("checkpoint", "list", "--agent=a1", "--limit=2").OK(t).Stdout
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	next := "git venom-checkpoint list --agent=a1 --limit=2 --before=k4"
	require.Equal(t, "… 3 more, older: "+next, lines[len(lines)-1])
	// The printed command, run as printed, lists the next page.
	page := env.run(env.Dir, nil, "sh", "-c", next).OK(t).Stdout
	assert.Regexp(t, `(?m)^k3 `, page)
	assert.Regexp(t, `(?m)^k2 `, page)
	assert.Contains(t, page, "… 1 more, older: git venom-checkpoint list --agent=a1 --limit=2 --before=k2\n")
	last := env.Venom("checkpoint", "list", "--agent=a1", "--before=k2").OK(t).Stdout
	assert.NotContains(t, last, "more")

	r := env.Venom("checkpoint", "list", "--agent=a1", "--turn=t9").Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stderr, "agent a1 has no turn t9")
	env.Venom("checkpoint", "list", "--agent=a1", "--turn=t9", "--json").Fails(t, 3, "not_found.checkpoint")
}

// TestList_TurnThatReusedARollbackCheckpoint: a rollback's checkpoint,
// taken outside the turns, that the next turn's start reused is where
// that turn began: list's TURN column names it, as it names t1 at the
// manual checkpoint t1's start reused, and the turn's diff from there is
// what git diff shows between the two checkpoints' trees.
func TestList_TurnThatReusedARollbackCheckpoint(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{"f.txt": "base\n"})
	env.Turn("a1", func() { env.Write("f.txt", "t1\n") })
	env.Rollback("--agent=a1", "k1", "--restore=files")
	rolled := env.List(t, "--agent=a1").Checkpoints[0]
	require.Equal(t, "rollback", rolled.Reason)
	env.Turn("a1", func() { env.Write("f.txt", "t2\n") })
	l := env.List(t, "--agent=a1")
	require.Equal(t, "turn_end", l.Checkpoints[0].Reason)
	require.Equal(t, rolled.Checkpoint, l.Checkpoints[1].Checkpoint, "t2's start reused the rollback's checkpoint")

	out := env.Venom("checkpoint", "list", "--agent=a1").OK(t).Stdout
	require.Regexp(t, `(?m)^`+rolled.Checkpoint+` +rollback +t2 `, out)
	require.Regexp(t, `(?m)^k1 +\S+ +t1 `, out)
	// Plain git: t2 changed f.txt from the rollback's tree.
	from, to := env.CheckpointTreeOf("a1", rolled.Checkpoint), env.CheckpointTreeOf("a1", l.Checkpoints[0].Checkpoint)
	require.Equal(t, "M\tf.txt", env.Git("diff", "--name-status", from, to))
}

// TestList_TurnListsTheCheckpointItsStartReused: a turn whose start found
// nothing changed reuses the checkpoint before it (the previous turn's
// end, or a manual one) and takes none of its own. list --turn=t2 lists
// that checkpoint too, with --json's turn the one it was taken in and
// reused_in naming t2; its ref is where t2's diff starts, as plain git
// shows.
func TestList_TurnListsTheCheckpointItsStartReused(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{"f.txt": "base\n"}) // k1, manual
	env.Turn("a1", func() { env.Write("f.txt", "t1\n") })      // start reuses k1; k2
	env.Turn("a1", func() { env.Write("f.txt", "t2\n") })      // start reuses k2; k3

	ids := func(l ListResult) []string {
		var out []string
		for _, it := range l.Checkpoints {
			out = append(out, it.Checkpoint)
		}
		return out
	}
	require.Equal(t, []string{"k3", "k2"}, ids(env.List(t, "--agent=a1", "--turn=t2")))
	require.Equal(t, []string{"k2", "k1"}, ids(env.List(t, "--agent=a1", "--turn=t1")))

	var raw struct {
		Checkpoints []struct {
			Checkpoint string   `json:"checkpoint"`
			Turn       *string  `json:"turn"`
			ReusedIn   []string `json:"reused_in"`
		} `json:"checkpoints"`
	}
	env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t).JSON(t, &raw)
	require.Len(t, raw.Checkpoints, 3)
	k3, k2, k1 := raw.Checkpoints[0], raw.Checkpoints[1], raw.Checkpoints[2]
	require.Equal(t, "t2", *k3.Turn)
	require.Equal(t, []string{}, k3.ReusedIn)
	require.Equal(t, "t1", *k2.Turn, "the turn it was taken in, as the log records it")
	require.Equal(t, []string{"t2"}, k2.ReusedIn)
	require.Nil(t, k1.Turn)
	require.Equal(t, []string{"t1"}, k1.ReusedIn)

	// The log says so: t2's start reused k2.
	reused := 0
	for _, rec := range env.LogRecords() {
		if rec["type"] == "checkpoint.reused" && rec["checkpoint"] == "k2" && rec["turn"] == "t2" {
			reused++
		}
	}
	require.Equal(t, 1, reused)
	// Plain git: t2's change is from k2's tree to k3's.
	require.Equal(t, "M\tf.txt", env.Git("diff", "--name-status", "refs/venom/checkpoints/a1/2",
		"refs/venom/checkpoints/a1/3"))

	out := env.Venom("checkpoint", "list", "--agent=a1", "--turn=t2").OK(t).Stdout
	require.Regexp(t, `(?m)^k2 +turn_end +t1 `, out)
	require.Regexp(t, `(?m)^k3 +turn_end +t2 `, out)
}
