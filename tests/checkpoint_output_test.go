package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckpoint_TakeResultGolden(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")

	r := env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	require.Equal(t, []string{"agent", "checkpoint", "reused", "skipped"}, Keys(t, r.Stdout))
	env.Golden(t, "checkpoint_take", r.Stdout)

	r = env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	env.Golden(t, "checkpoint_take_reused", r.Stdout)
}

func TestCheckpoint_ListResultGolden(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "100")
	env.Write("big.bin", strings.Repeat("x", 200))
	env.Take(t, "--agent=a1", "--reason=turn_start")
	env.Write("a.txt", "agent's edit\n")
	env.Take(t, "--agent=a1", "--label=mid")
	env.Write("b.txt", "more\n")
	env.Take(t, "--agent=a1", "--reason=turn_end", "--label=done")

	r := env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t)
	require.Equal(t, []string{"agent", "pending", "checkpoints", "more_count"}, Keys(t, r.Stdout))
	env.Golden(t, "checkpoint_list", r.Stdout)
}

func TestCheckpoint_ListNewestFirstWithFilters(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1", "--reason=turn_start") // k1 t1
	env.Write("a.txt", "1\n")
	env.Take(t, "--agent=a1", "--reason=turn_end")   // k2 t1
	env.Take(t, "--agent=a1", "--reason=turn_start") // reuses k2: t2's too
	env.Write("a.txt", "2\n")
	env.Take(t, "--agent=a1") // k3 t2, mid-turn
	env.Write("a.txt", "3\n")
	env.Take(t, "--agent=a1", "--reason=turn_end") // k4 t2

	ids := func(l ListResult) []string {
		var out []string
		for _, it := range l.Checkpoints {
			out = append(out, it.Checkpoint)
		}
		return out
	}
	cases := []struct {
		args []string
		want []string
	}{
		{nil, []string{"k4", "k3", "k2", "k1"}},
		{[]string{"--turn=t1"}, []string{"k2", "k1"}},
		{[]string{"--turn=t2"}, []string{"k4", "k3", "k2"}},
		{[]string{"--before=k3"}, []string{"k2", "k1"}},
		{[]string{"--before=k1"}, nil},
		{[]string{"--limit=2"}, []string{"k4", "k3"}},
		{[]string{"--before=k4", "--limit=1"}, []string{"k3"}},
		{[]string{"--turn=t2", "--before=k4"}, []string{"k3", "k2"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			l := env.List(t, append([]string{"--agent=a1"}, c.args...)...)
			assert.Equal(t, "a1", l.Agent)
			assert.False(t, l.Pending)
			assert.NotNil(t, l.Checkpoints, "checkpoints is [] when empty, never null")
			assert.Equal(t, c.want, ids(l))
		})
	}
	// The agent is the only one, so --agent may be left out (docs/checkpoints.md#names).
	assert.Equal(t, []string{"k4", "k3", "k2", "k1"}, ids(env.List(t)))
	r := env.Venom("checkpoint", "list", "--agent=a1", "--before=x3", "--json")
	r.Fails(t, 2, "invalid_params.checkpoint")
	env.Venom("checkpoint", "list", "--agent=a1", "--turn=3", "--json").Fails(t, 2, "invalid_params.turn")
	env.Venom("checkpoint", "list", "--agent=nobody", "--json").Fails(t, 3, "not_found.agent")
}

func TestCheckpoint_ListHumanTable(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1", "--reason=turn_start")
	env.Write("a.txt", "1\n")
	env.Write("b.txt", "2\n")
	env.Take(t, "--agent=a1", "--reason=turn_end", "--label=first")
	env.Write("a.txt", "changed\n")
	env.Take(t, "--agent=a1")

	r := env.Venom("checkpoint", "list", "--agent=a1").OK(t)
	require.NotContains(t, r.Stdout, "\x1b[", "colour when piped")
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	require.Len(t, lines, 4, r.Stdout)
	head := strings.Fields(lines[0])
	require.Equal(t, []string{"ID", "REASON", "TURN", "AGE", "FILES"}, head[:5], r.Stdout)
	row := func(i int) []string { return strings.Fields(lines[i]) }
	// Newest first: id, reason, turn, age, files changed since the previous one.
	assert.Equal(t, []string{"k3", "manual", "-"}, row(1)[:3])
	assert.Equal(t, "1", row(1)[4], "k3 changed a.txt since k2")
	assert.Equal(t, []string{"k2", "turn_end", "t1"}, row(2)[:3])
	assert.Equal(t, "2", row(2)[4], "k2 added a.txt and b.txt since k1")
	assert.Contains(t, lines[2], "first")
	assert.Equal(t, []string{"k1", "turn_start", "t1"}, row(3)[:3])
	assert.Equal(t, "-", row(3)[4], "k1 has no previous checkpoint")
	for i := 1; i <= 3; i++ {
		assert.Regexp(t, regexp.MustCompile(`^\d+[smhd]$`), row(i)[3], "age of %s", lines[i])
	}

	one := NewEnv(t)
	one.Venom("checkpoint", "--agent=a1").OK(t)
	r = one.Venom("checkpoint", "list", "--agent=a1").OK(t)
	require.Len(t, strings.Split(strings.TrimSpace(r.Stdout), "\n"), 2, r.Stdout)
}

func TestCheckpoint_HumanTakeOutput(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "10")
	env.Write("big.bin", strings.Repeat("x", 20))
	r := env.Venom("checkpoint", "--agent=a1").OK(t)
	assert.Contains(t, r.Stdout, "a1/k1")
	assert.Contains(t, r.Stderr, "big.bin", "a warning, on stderr")
	assert.NotContains(t, r.Stdout, "\x1b[")
	r = env.Venom("checkpoint", "--agent=a1").OK(t)
	assert.Contains(t, r.Stdout, "a1/k1")
	assert.Empty(t, r.Stderr)
}

func TestCheckpoint_FromAnyFolderAndWithDashC(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("sub/dir/a.txt", "a\n")
	env.Commit("sub")
	env.Write("top.txt", "top\n")
	env.Write("sub/dir/a.txt", "changed\n")
	want := env.RecipeTree()

	// From a subfolder: the whole tree is captured, not just the folder.
	r := env.VenomIn(env.Path("sub/dir"), nil, "checkpoint", "--agent=a1", "--json").OK(t)
	var res TakeResult
	r.JSON(t, &res)
	require.Equal(t, "k1", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 1))

	// git -C DIR from outside the repository.
	env.Write("top.txt", "again\n")
	want = env.RecipeTree()
	r = env.VenomIn(env.Root, nil, "checkpoint", "--agent=a1", "--json")
	r.Fails(t, 10, "unsupported.checkpoint_no_repo")
	r = env.run(env.Root, nil, "git", "-C", env.Dir, "venom-checkpoint", "--agent=a1", "--json").OK(t)
	r.JSON(t, &res)
	require.Equal(t, "k2", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	r = env.run(env.Root, nil, "git", "-C", env.Path("sub"), "venom-checkpoint", "list", "--json").OK(t)
	var l ListResult
	r.JSON(t, &l)
	require.Len(t, l.Checkpoints, 2)
	require.Equal(t, env.Dir, l.Checkpoints[0].Repos[0].Path)
}

func TestCheckpoint_Errors(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1", "--reason=turn_start") // t1 open
	bare := filepath.Join(env.Root, "bare.git")
	env.run(env.Root, nil, "git", "init", "-q", "--bare", bare).OK(t)
	outside := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	// GIT_CEILING_DIRECTORIES keeps git from walking up past the temp dir.
	ceiling := []string{"GIT_CEILING_DIRECTORIES=" + env.Root}

	cases := []struct {
		name string
		dir  string
		args []string
		exit int
		code string
	}{
		{"agent upper case", env.Dir, []string{"--agent=A1"}, 2, "invalid_params.agent"},
		{"agent leading dash", env.Dir, []string{"--agent=-a"}, 2, "invalid_params.agent"},
		{"agent leading underscore", env.Dir, []string{"--agent=_a"}, 2, "invalid_params.agent"},
		{"agent slash", env.Dir, []string{"--agent=a/b"}, 2, "invalid_params.agent"},
		{"agent space", env.Dir, []string{"--agent=a b"}, 2, "invalid_params.agent"},
		{"agent dot", env.Dir, []string{"--agent=a.b"}, 2, "invalid_params.agent"},
		{"agent 65 chars", env.Dir, []string{"--agent=" + strings.Repeat("a", 65)}, 2, "invalid_params.agent"},
		{"agent non-ascii", env.Dir, []string{"--agent=é"}, 2, "invalid_params.agent"},
		{"list agent invalid", env.Dir, []string{"list", "--agent=A"}, 2, "invalid_params.agent"},
		{"outside a repository", outside, []string{"--agent=a1"}, 10, "unsupported.checkpoint_no_repo"},
		{"list outside a repository", outside, []string{"list", "--agent=a1"}, 10, "unsupported.checkpoint_no_repo"},
		{"bare repository", bare, []string{"--agent=a1"}, 10, "unsupported.checkpoint_no_repo"},
		{"inside .git", filepath.Join(env.Dir, ".git"), []string{"--agent=a1"}, 10, "unsupported.checkpoint_no_repo"},
		{"turn with manual", env.Dir, []string{"--agent=a1", "--turn=t1"}, 2, "invalid_params.turn"},
		{"turn with takeover", env.Dir, []string{"--agent=a1", "--reason=takeover", "--turn=t1"}, 2, "invalid_params.turn"},
		{"turn malformed", env.Dir, []string{"--agent=a1", "--reason=turn_end", "--turn=1"}, 2, "invalid_params.turn"},
		{"turn zero", env.Dir, []string{"--agent=a1", "--reason=turn_end", "--turn=t0"}, 2, "invalid_params.turn"},
		{"turn leading zero", env.Dir, []string{"--agent=a1", "--reason=turn_end", "--turn=t01"}, 2, "invalid_params.turn"},
		{"turn_end closes another turn", env.Dir, []string{"--agent=a1", "--reason=turn_end", "--turn=t2"}, 2, "invalid_params.turn"},
		{"turn_start of an old turn", env.Dir, []string{"--agent=a1", "--reason=turn_start", "--turn=t1"}, 2, "invalid_params.turn"},
		{"turn for a new agent", env.Dir, []string{"--agent=new1", "--turn=t1"}, 2, "invalid_params.turn"},
		{"reason unknown", env.Dir, []string{"--agent=a1", "--reason=fork"}, 2, "invalid_params"},
		{"reason pre_rollback", env.Dir, []string{"--agent=a1", "--reason=pre_rollback"}, 2, "invalid_params"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			beforeLog := env.LogRecords()
			beforeRefs := env.VenomRefs()
			r := env.run(c.dir, ceiling, "git", append([]string{"venom-checkpoint"}, append(c.args, "--json")...)...)
			r.Fails(t, c.exit, "")
			e := ErrorOf(t, r)
			assert.True(t, strings.HasPrefix(e.Error.Code, c.code), "code %s, want %s", e.Error.Code, c.code)
			assert.Empty(t, r.Stderr, "--json errors go to stdout only")
			// Bad input writes nothing: no record, no ref.
			assert.Equal(t, beforeLog, env.LogRecords(), "the journal changed")
			assert.Equal(t, beforeRefs, env.VenomRefs())

			// Without --json: one line on stderr starting "error: <code>", nothing on stdout.
			h := env.run(c.dir, ceiling, "git", append([]string{"venom-checkpoint"}, c.args...)...)
			assert.Equal(t, c.exit, h.Code)
			assert.Empty(t, h.Stdout)
			assert.True(t, strings.HasPrefix(h.Stderr, "error: "+c.code), "stderr: %s", h.Stderr)
		})
	}
	// The agent stays where it was: t1 is still open.
	require.Equal(t, []string{"agent.registered", "turn.started", "checkpoint.taken"}, env.LogTypes())
}
