package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRollback_KeepsTheCurrentFolder: a person in a folder the turn made
// (cd newdir/sub) rolls back past the turn. The folder stays, emptied, as
// git never removes the current working directory; the plan and the result
// say so, exact stays true (git tracks no folders), and the undo printed
// works from there.
func TestRollback_KeepsTheCurrentFolder(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Write("newdir/sub/made.txt", "by the turn\n")
	env.Write("newdir/sub/deeper/x.txt", "by the turn\n")
	env.Write("newdir/other.txt", "by the turn\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	s := env.RecipeTree()
	cwd := env.Path("newdir/sub")

	dry := env.VenomIn(cwd, nil, "rollback", "k1", "--agent=a1", "--dry-run", "--json").OK(t).Map(t)
	require.Equal(t, "newdir/sub", dry["kept_folder"], "the plan does not say the current folder stays")
	human := env.VenomIn(cwd, nil, "rollback", "k1", "--agent=a1", "--dry-run").OK(t)
	require.Contains(t, human.Stdout, "Your current folder newdir/sub stays, empty")

	real := env.VenomIn(cwd, nil, "rollback", "k1", "--agent=a1", "--plan="+dry["plan"].(string)).OK(t)
	require.Contains(t, real.Stdout, "Your current folder newdir/sub stays, empty")
	fi, err := os.Stat(cwd)
	require.NoError(t, err, "the current folder was removed")
	require.True(t, fi.IsDir())
	names, err := os.ReadDir(cwd)
	require.NoError(t, err)
	require.Empty(t, names, "the current folder is not emptied")
	_, err = os.Stat(env.Path("newdir/other.txt"))
	require.True(t, os.IsNotExist(err))
	require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
	after := env.Records("checkpoint.taken")
	require.Equal(t, "rollback", after[len(after)-1]["reason"])

	// exact: the JSON result of the same rollback run again says true.
	env.Venom("rollback", "--undo", "--agent=a1", "--plan="+env.DryRun("--undo", "--agent=a1").Plan, "--json").OK(t)
	plan := env.VenomIn(cwd, nil, "rollback", "k1", "--agent=a1", "--dry-run", "--json").OK(t).Map(t)["plan"].(string)
	res := env.VenomIn(cwd, nil, "rollback", "k1", "--agent=a1", "--plan="+plan, "--json").OK(t).Map(t)
	require.Equal(t, true, res["exact"])
	require.Equal(t, "newdir/sub", res["kept_folder"])

	// The undo printed runs as printed, from the folder the person is in.
	printed := real.Stdout[strings.Index(real.Stdout, "undo: ")+len("undo: "):]
	printed = strings.TrimSpace(strings.SplitN(printed, "\n", 2)[0])
	args := strings.Fields(printed)
	require.Equal(t, []string{"git", "venom-rollback", "--undo"}, args[:3], "%s", real.Stdout)
	undoDry := env.VenomIn(cwd, nil, "rollback", append(args[2:], "--dry-run", "--json")...).OK(t).Map(t)
	env.VenomIn(cwd, nil, "rollback", append(args[2:], "--plan="+undoDry["plan"].(string), "--json")...).OK(t)
	require.Equal(t, s, env.RecipeTree())
	require.Equal(t, "by the turn\n", env.Read("newdir/sub/made.txt"))
}
