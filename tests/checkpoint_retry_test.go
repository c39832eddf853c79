package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// plantRef makes refs/venom/checkpoints/<agent>/<n> by hand, with plain git,
// pointing at a commit of the current HEAD tree with the given message.
func (e *Env) plantRef(agent string, n int, msg string) string {
	e.t.Helper()
	tree := e.Git("rev-parse", "HEAD^{tree}")
	r := e.runInput(e.Dir, nil, msg, "git", "commit-tree", "-p", "HEAD", tree)
	require.Equal(e.t, 0, r.Code, r.Stderr)
	commit := strings.TrimSpace(r.Stdout)
	e.Git("update-ref", fmt.Sprintf("refs/venom/checkpoints/%s/%d", agent, n), commit, "")
	return commit
}

func trailers(agent, id, reason string) string {
	return fmt.Sprintf("venom checkpoint %s/%s\n\nVenom-Agent: %s\nVenom-Checkpoint: %s\nVenom-Reason: %s\n",
		agent, id, agent, id, reason)
}

func TestCheckpoint_RetryRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		msg     string
		adopted bool
	}{
		{"its own ref is adopted", trailers("a1", "k1", "turn_end"), true},
		{"a foreign commit is skipped", "someone's commit\n", false},
		{"another agent's ref is skipped", trailers("b2", "k1", "manual"), false},
		{"another id's ref is skipped", trailers("a1", "k7", "manual"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			planted := env.plantRef("a1", 1, c.msg)
			env.Write("a.txt", "work\n")
			want := env.RecipeTree()
			snap := env.Snapshot()

			res := env.Take(t, "--agent=a1")
			env.AssertUntouched(t, snap)
			require.False(t, res.Reused)
			require.Equal(t, "k2", *res.Checkpoint, "k1 is taken by the planted ref either way")
			require.Equal(t, want, env.CheckpointTree("a1", 2))
			require.Equal(t, planted, env.Git("rev-parse", "refs/venom/checkpoints/a1/1"), "the planted ref moved")

			var ids []string
			for _, it := range env.List(t, "--agent=a1").Checkpoints {
				ids = append(ids, it.Checkpoint)
			}
			taken := env.Records("checkpoint.taken")
			if c.adopted {
				require.Equal(t, []string{"k2", "k1"}, ids)
				require.Len(t, taken, 2)
				require.Equal(t, "k1", taken[0]["checkpoint"])
				require.Equal(t, "turn_end", taken[0]["reason"], "the adopted record says what the trailers say")
				repo := taken[0]["repos"].([]any)[0].(map[string]any)
				require.Equal(t, planted, repo["commit"])
				require.Equal(t, env.Git("rev-parse", "HEAD"), repo["head"])
			} else {
				require.Equal(t, []string{"k2"}, ids)
				require.Len(t, taken, 1)
			}
			// Never blocks later captures (docs/checkpoints.md#refs).
			env.Write("a.txt", "more\n")
			require.Equal(t, "k3", *env.Take(t, "--agent=a1").Checkpoint)
			env.AssertSeqGapless(t)
		})
	}
}

func TestCheckpoint_RetryRuleThenDedup(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1") // k1
	// A capture of the next state died between its ref and its record: k2
	// holds exactly the current state, and no record names it.
	env.Write("a.txt", "work\n")
	tree := env.RecipeTree()
	r := env.runInput(env.Dir, nil, trailers("a1", "k2", "manual"), "git", "commit-tree", "-p", "HEAD", tree)
	require.Equal(t, 0, r.Code, r.Stderr)
	env.Git("update-ref", "refs/venom/checkpoints/a1/2", strings.TrimSpace(r.Stdout), "")

	res := env.Take(t, "--agent=a1")
	// k2 is adopted, and it holds the state now: docs/checkpoints.md#reuse reuses it rather
	// than making k3 with the same tree.
	require.Equal(t, "k2", *res.Checkpoint)
	require.True(t, res.Reused)
	require.Equal(t, []string{"refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2"}, refNames(env))
	require.Equal(t, []string{"agent.registered", "checkpoint.taken", "checkpoint.taken", "checkpoint.reused"}, env.LogTypes())
}

func refNames(env *Env) []string {
	var out []string
	for _, r := range env.VenomRefs() {
		name, _, _ := strings.Cut(r, "=")
		out = append(out, name)
	}
	return out
}
