package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

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
