package tests

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCapture_PrivateIndexMatchesTheRecipe drives random edits, git
// commands and captures, and checks after every capture that the checkpoint
// holds exactly the tree RFC 4.1's git recipe gives for that state. The
// private index and its memo must never make a capture differ from it.
func TestCapture_PrivateIndexMatchesTheRecipe(t *testing.T) {
	t.Parallel()
	seed := int64(1)
	if s := os.Getenv("VENOM_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	steps := 40
	if os.Getenv("VENOM_TEST_LONG") != "" {
		steps = 400
	}
	rng := rand.New(rand.NewSource(seed))
	env := NewEnv(t)
	names := []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g.log", "h/i.txt", "new.txt", "d/new.txt"}
	for _, n := range names[:4] {
		env.Write(n, n+"\n")
	}
	env.Commit("base")
	n := 0
	for step := 0; step < steps; step++ {
		name := names[rng.Intn(len(names))]
		switch op := rng.Intn(11); op {
		case 0, 1, 2:
			env.Write(name, fmt.Sprintf("%s %d\n", name, rng.Int()))
		case 3:
			env.Remove(name)
		case 4:
			env.GitRaw("add", "-A")
		case 5:
			env.Commit(fmt.Sprintf("step %d", step))
		case 6:
			if rng.Intn(2) == 0 {
				env.Write(".gitignore", "*.log\nh/\n")
			} else {
				env.Write(".gitignore", "d/\n")
			}
		case 7:
			env.Remove(".gitignore")
		case 8:
			if _, err := os.Stat(env.Path(name)); err == nil {
				_ = os.Chmod(env.Path(name), 0o755)
			}
		case 9:
			env.GitRaw("update-index", "--assume-unchanged", "a.txt")
			env.Write("a.txt", fmt.Sprintf("assumed %d\n", step))
		case 10:
			env.GitRaw("rm", "-q", "--cached", "-r", "--ignore-unmatch", name)
		}
		if rng.Intn(3) == 0 {
			continue
		}
		want := env.RecipeTree()
		var res struct {
			Checkpoint string `json:"checkpoint"`
			Reused     bool   `json:"reused"`
		}
		env.Venom("checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
		if !res.Reused {
			n++
			require.Equal(t, fmt.Sprintf("k%d", n), res.Checkpoint)
		}
		got := env.Git("rev-parse", "refs/venom/checkpoints/a1/"+res.Checkpoint[1:]+"^{tree}")
		require.Equal(t, want, got, "seed %d step %d: the capture differs from the recipe", seed, step)
	}
}

// TestCapture_PrivateIndexAfterARefresh: a git status that only refreshes
// the user's index changes nothing captured, and a real change to the index
// (git add) still shows in the next capture. (lib/capture's own test checks
// that the refresh does not make the private index again.)
func TestCapture_PrivateIndexAfterARefresh(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Commit("a")
	env.Checkpoint("--agent=a1")
	// Touch a tracked file without changing it: the next git status refreshes
	// and rewrites the user's index.
	before := env.Git("rev-parse", "--path-format=absolute", "--git-path", "index")
	fi1, err := os.Stat(before)
	require.NoError(t, err)
	now := fi1.ModTime().Add(5 * 1e9)
	require.NoError(t, os.Chtimes(env.Path("a.txt"), now, now))
	env.Git("status", "--porcelain")
	fi2, err := os.Stat(before)
	require.NoError(t, err)
	require.NotEqual(t, fi1.ModTime(), fi2.ModTime(), "git status did not rewrite the index")
	m := env.Venom("checkpoint", "--agent=a1", "--json").OK(t).Map(t)
	require.Equal(t, true, m["reused"])

	env.Write("a.txt", "two\n")
	env.Git("add", "a.txt")
	env.Write("a.txt", "three\n")
	want := env.RecipeTree()
	require.Equal(t, "k2", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 2))
}
