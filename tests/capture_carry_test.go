package tests

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// carryEnv is the environment of captures whose carry trusts stat data
// older than 50 ms (instead of 2 s), and that report how many files the
// carry stored.
func carryEnv(env *Env) (extra []string, timings string) {
	timings = filepath.Join(env.Root, "timings")
	return []string{"VENOM_TEST_RACY_MS=50", "VENOM_TEST_TIMINGS=" + timings}, timings
}

// carryCapture takes a checkpoint and returns its tree and how many files
// the carry stored (-1: the capture did not carry).
func carryCapture(t *testing.T, env *Env, extra []string, timings string) (string, int) {
	t.Helper()
	_ = os.Remove(timings)
	// Past the shortened racy window: what was written before is trusted.
	time.Sleep(60 * time.Millisecond)
	var res struct {
		Checkpoint string `json:"checkpoint"`
	}
	env.VenomIn(env.Dir, extra, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	stored := -1
	b, _ := os.ReadFile(timings)
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "capture-carry-stored "); ok {
			stored, _ = strconv.Atoi(n)
		}
	}
	return env.refTree("refs/venom/checkpoints/a1/" + res.Checkpoint[1:]), stored
}

// TestCapture_CarryStoresOnlyWhatMoved: beside many untracked files
// captured once, a capture after a turn's edits stores only the files
// whose stat data moved and the new ones, and its tree is still the
// recipe's through a same-size edit, a mode change, a file replaced by a
// folder, a folder by a link, a tracked file edited or deleted then
// restored, an untracked file gone, and a .gitattributes written (which
// stores every file again).
func TestCapture_CarryStoresOnlyWhatMoved(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	env.Write("t/a.txt", "tracked a\n")
	env.Write("t/b.txt", "tracked b\n")
	env.Commit("base")
	for i := 0; i < 40; i++ {
		env.Write(fmt.Sprintf("u/d%d/f%02d.txt", i%4, i), fmt.Sprintf("untracked %02d\n", i))
	}
	env.Write("v/x.txt", "x\n")
	env.Write("v/y.txt", "y\n")
	tree, stored := carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, -1, stored, "the first capture has no memo to carry")

	steps := []struct {
		name   string
		change func()
		stored int // files the carry stores, -1: it must not carry
	}{
		{"nothing", func() {}, -2}, // the memo's own tree, or the carry of nothing
		{"one edited, one new", func() {
			env.Write("u/d1/f01.txt", "edited, longer than before\n")
			env.Write("u/d2/new.txt", "new\n")
		}, 2},
		{"same size", func() { env.Write("u/d3/f03.txt", "UNTRACKED 03\n") }, 1},
		{"executable", func() { require.NoError(t, os.Chmod(env.Path("u/d0/f04.txt"), 0o755)) }, 1},
		{"file to folder", func() {
			env.Remove("u/d1/f05.txt")
			env.Write("u/d1/f05.txt/inner.txt", "inner\n")
		}, 1},
		{"folder to link", func() {
			env.Remove("v")
			require.NoError(t, os.Symlink("t", env.Path("v")))
		}, 1},
		{"tracked edited", func() { env.Write("t/a.txt", "tracked a, edited\n") }, 1},
		{"tracked restored", func() { env.Git("checkout", "-q", "--", "t/a.txt") }, -2},
		{"tracked deleted", func() { env.Remove("t/b.txt") }, 0},
		{"tracked back", func() { env.Write("t/b.txt", "tracked b\n") }, -2},
		{"untracked gone", func() { env.Remove("u/d2/f06.txt") }, 0},
		{"attributes", func() { env.Write("u/.gitattributes", "*.txt text\n") }, -1},
	}
	for _, step := range steps {
		step.change()
		tree, stored := carryCapture(t, env, extra, timings)
		require.Equal(t, env.RecipeTree(), tree, step.name)
		switch step.stored {
		case -2:
			// A file written back: git status may find it clean by its
			// bytes, the quick scan lists it for them. Either is right.
		default:
			require.Equal(t, step.stored, stored, "%s: files the carry stored", step.name)
		}
	}
}

// TestCapture_CarryMatchesTheRecipe: random edits to tracked and
// untracked files, folders and links, captured now and then with the
// carry trusting what is older than 50 ms; every tree is the recipe's,
// and most captures carried.
func TestCapture_CarryMatchesTheRecipe(t *testing.T) {
	t.Parallel()
	seed, long := randomSeed(3)
	steps := 60
	if long {
		steps = 400
	}
	rng := rand.New(rand.NewSource(seed))
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	dirs := []string{"", "a", "a/b", "c", "c/d"}
	names := []string{"f.txt", "g.txt", "h.bin", "b", "d"}
	pick := func(list []string) string { return list[rng.Intn(len(list))] }
	path := func() string { return filepath.Join(pick(dirs), pick(names)) }
	for i, d := range dirs {
		env.Write(filepath.Join(d, "f.txt"), fmt.Sprintf("base %d\n", i))
	}
	env.Commit("base")
	for i := 0; i < 30; i++ {
		env.Write(fmt.Sprintf("many/m%02d.txt", i), fmt.Sprintf("many %d\n", i))
	}
	captures, carried := 0, 0
	for step := 0; step < steps; step++ {
		p := path()
		switch rng.Intn(9) {
		case 0, 1, 2:
			_ = os.RemoveAll(env.Path(p))
			env.Write(p, fmt.Sprintf("%d\n", rng.Intn(1000)))
		case 3:
			// Same size, other bytes.
			if b, err := os.ReadFile(env.Path(p)); err == nil && len(b) > 0 {
				b[0] ^= 1
				require.NoError(t, os.WriteFile(env.Path(p), b, 0o644))
			}
		case 4:
			env.Remove(p)
		case 5:
			_ = os.Chmod(env.Path(p), os.FileMode(0o644|rng.Intn(2)*0o111))
		case 6:
			env.Remove(p)
			require.NoError(t, os.MkdirAll(filepath.Dir(env.Path(p)), 0o755))
			require.NoError(t, os.Symlink(pick(names), env.Path(p)))
		case 7:
			env.GitRaw("checkout", "-q", "--", pick(dirs[1:]))
		case 8:
			env.Write(fmt.Sprintf("many/m%02d.txt", rng.Intn(30)), fmt.Sprintf("edited %d\n", step))
		}
		if rng.Intn(2) == 0 {
			continue
		}
		captures++
		tree, stored := carryCapture(t, env, extra, timings)
		if stored >= 0 {
			carried++
		}
		if want := env.RecipeTree(); want != tree {
			t.Fatalf("seed %d step %d (carried %v): the capture differs from the recipe:\n%s\nstatus:\n%s", seed, step, stored >= 0,
				env.GitRaw("diff-tree", "-r", want, tree).Stdout, env.GitRaw("status", "--porcelain", "-uall").Stdout)
		}
	}
	t.Logf("seed %d: %d of %d captures carried", seed, carried, captures)
	require.Greater(t, carried, captures/3, "too few captures carried")
	env.CheckObjects(t)
}

// TestCapture_CarryAcrossBlocks: the steady carry stats a tree's listed
// paths a block at a time, one block's while the last is compared with
// the memo's listing. Edits at the first and last paths, on either side of
// block edges, a file gone, a new one, and a file rewritten to the same
// size with its modification time set back (only its ctime moved) are all
// stored, and the tree is the recipe's.
func TestCapture_CarryAcrossBlocks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	const n = 5000 // more than two blocks of 2,048
	name := func(i int) string { return fmt.Sprintf("u/d%02d/f%04d.txt", i/100, i) }
	for i := 0; i < n; i++ {
		env.Write(name(i), fmt.Sprintf("untracked %04d\n", i))
	}
	tree, stored := carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, -1, stored, "the first capture has no memo to carry")
	again, _ := carryCapture(t, env, extra, timings)
	require.Equal(t, tree, again, "nothing changed")

	// Paths in byte order: the only tracked file (the initial commit's)
	// sorts before u/.
	edited := []int{0, 2046, 2047, 2048, 4095, 4096, n - 1}
	for _, i := range edited {
		env.Write(name(i), fmt.Sprintf("UNTRACKED %04d\n", i))
	}
	env.Remove(name(3000))
	env.Write("u/d30/new.txt", "new\n")
	// Same size, same mtime: only the ctime tells.
	st, err := os.Stat(env.Path(name(1000)))
	require.NoError(t, err)
	env.Write(name(1000), "UNTRACKED 1000\n")
	require.NoError(t, os.Chtimes(env.Path(name(1000)), st.ModTime(), st.ModTime()))
	tree, stored = carryCapture(t, env, extra, timings)
	require.Equal(t, env.RecipeTree(), tree)
	require.Equal(t, len(edited)+2, stored, "files the carry stored")
	for _, i := range append(edited, 1000) {
		require.Equal(t, fmt.Sprintf("UNTRACKED %04d\n", i), env.Git("cat-file", "blob", tree+":"+name(i))+"\n")
	}
	require.Equal(t, "", env.Git("ls-tree", tree, name(3000)))
}

// TestCapture_QuickScanThroughGitOrNot: git venom-checkpoint (whose PATH
// git starts with its exec path) and git-venom-checkpoint run straight
// from the shell find the same git settings files, so each keeps the
// other's scan record and memo: a capture with nothing changed is a
// quick scan and a carry either way, not the whole tree stored again.
func TestCapture_QuickScanThroughGitOrNot(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	for i := 0; i < 40; i++ {
		env.Write(fmt.Sprintf("u/d%d/f%02d.txt", i%4, i), fmt.Sprintf("untracked %02d\n", i))
	}
	tree, _ := carryCapture(t, env, extra, timings)
	again, _ := carryCapture(t, env, extra, timings)
	require.Equal(t, tree, again)
	steps := func() string {
		b, err := os.ReadFile(timings)
		require.NoError(t, err)
		var names []string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 0 && (f[0] == "capture-steady" || f[0] == "capture-list") {
				names = append(names, f[0])
			}
		}
		return strings.Join(names, " ")
	}
	for _, direct := range []bool{false, false, true, true, false} {
		_ = os.Remove(timings)
		time.Sleep(60 * time.Millisecond)
		if direct {
			env.run(env.Dir, extra, filepath.Join(binDir, "git-venom-checkpoint"), "--agent=a1", "--json").OK(t)
		} else {
			env.VenomIn(env.Dir, extra, "checkpoint", "--agent=a1", "--json").OK(t)
		}
		require.Equal(t, "capture-steady", steps(), "run directly: %v", direct)
	}
	require.Equal(t, tree, env.refTree("refs/venom/checkpoints/a1/1"))
}
