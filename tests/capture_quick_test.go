package tests

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// noStatus arms the fault point just before a capture's git status: a
// capture that succeeds with it armed was decided by the quick scan alone.
var noStatus = []string{"VENOM_TEST_FAIL_AT=capture-status"}

// quickCapture takes a checkpoint that must not run git status, and returns
// its tree.
func quickCapture(t *testing.T, env *Env) string {
	t.Helper()
	var res struct {
		Checkpoint string `json:"checkpoint"`
	}
	env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	return env.refTree("refs/venom/checkpoints/a1/" + res.Checkpoint[1:])
}

// initNested makes a repository with one commit at rel.
func initNested(t *testing.T, env *Env, rel string) {
	t.Helper()
	env.Write(rel+"/n.txt", "nested\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "n"}} {
		c := exec.Command("git", args...)
		c.Dir = env.Path(rel)
		c.Env = env.Environ()
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

// TestCapture_QuickScanFindsWhatGitStatusFinds: once a capture has recorded
// the tree's folders, later captures run no git status, and still hold
// exactly the recipe's tree: edits, new files in old, new and nested
// folders, a folder that was empty, links, nested repositories, files that
// ignore rules hide or show again.
func TestCapture_QuickScanFindsWhatGitStatusFinds(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".gitignore", "*.log\n!keep.log\nbuild/\n/top-only.txt\n")
	env.Write("a.txt", "a\n")
	env.Write("d/c.txt", "c\n")
	env.Write("d/e/f.txt", "f\n")
	env.Commit("base")
	env.Checkpoint("--agent=a1") // records the folders

	// Nothing changed: no git status, the same checkpoint.
	var res struct {
		Checkpoint string `json:"checkpoint"`
		Reused     bool   `json:"reused"`
	}
	env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	require.True(t, res.Reused)

	steps := []struct {
		name string
		do   func()
	}{
		{"edits and new files", func() {
			env.Write("a.txt", "a changed\n")
			env.Write("d/new.txt", "new\n")
			env.Write("n1/n2/deep.txt", "deep\n")
			env.Write("x.log", "ignored\n")
			env.Write("d/keep.log", "shown again\n")
			env.Write("build/out.bin", "ignored folder\n")
			env.Write("d/top-only.txt", "anchored rule, other folder\n")
			env.Write("top-only.txt", "anchored rule\n")
			require.NoError(t, os.MkdirAll(env.Path("empty"), 0o755))
			require.NoError(t, os.Symlink("a.txt", env.Path("link")))
		}},
		{"a file in the folder that was empty", func() {
			env.Write("empty/now.txt", "not empty\n")
		}},
		{"removals", func() {
			env.Remove("d/new.txt")
			env.Remove("d/e/f.txt")
			env.Remove("link")
		}},
		{"a nested repository", func() {
			initNested(t, env, "sub")
		}},
		{"a linked worktree inside the tree", func() {
			env.Git("worktree", "add", "-q", "--detach", "inner-wt")
		}},
		{"a tracked file becomes a folder", func() {
			env.Remove("d/c.txt")
			env.Write("d/c.txt/inner.txt", "inner\n")
		}},
	}
	for _, s := range steps {
		s.do()
		want := env.RecipeTree()
		require.Equal(t, want, quickCapture(t, env), s.name)
	}
	// Ignored files alone change nothing.
	env.Write("build/more.bin", "ignored\n")
	env.Write("d/y.log", "ignored\n")
	env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	require.True(t, res.Reused)
}

// TestCapture_QuickScanLeavesDoubtToGit: what the quick scan cannot decide
// exactly sends the capture to git status, and the capture after that is
// quick again.
func TestCapture_QuickScanLeavesDoubtToGit(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".gitignore", "*.log\n")
	env.Write("d/c.txt", "c\n")
	env.Write("d/e/f.txt", "f\n")
	env.Commit("base")
	env.Checkpoint("--agent=a1")
	exclude := filepath.Join(env.CommonDir(), "info", "exclude")
	cases := []struct {
		name string
		do   func()
	}{
		{"a tracked ignore file changed", func() { env.Write(".gitignore", "*.txt\n") }},
		{"info/exclude changed", func() {
			require.NoError(t, os.MkdirAll(filepath.Dir(exclude), 0o755))
			require.NoError(t, os.WriteFile(exclude, []byte("d/e/\n"), 0o644))
		}},
		{"the global excludes file appeared", func() {
			env.Write("g.tmp", "global\n")
			p := filepath.Join(env.Home, ".config", "git", "ignore")
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte("*.tmp\n"), 0o644))
		}},
		{"a new ignore file in a folder", func() { env.Write("d/.gitignore", "*.x\n") }},
		{"a folder went away", func() { env.Remove("d") }},
	}
	for _, c := range cases {
		c.do()
		r := env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json")
		require.NotEqual(t, 0, r.Code, "%s: the quick scan decided alone", c.name)
		want := env.RecipeTree()
		require.Equal(t, want, env.CheckpointTree("a1", mustAtoi(t, strings.TrimPrefix(env.Checkpoint("--agent=a1"), "k"))), c.name)
		// git status made the record again: the next capture is quick.
		env.Write("d/after.txt", c.name+"\n")
		require.Equal(t, env.RecipeTree(), quickCapture(t, env), c.name)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// TestCapture_QuickScanMatchesTheRecipe drives random changes to folders,
// files and ignore rules. Each capture first tries without git status;
// whichever way it goes, its tree must be the recipe's.
func TestCapture_QuickScanMatchesTheRecipe(t *testing.T) {
	t.Parallel()
	seed, long := randomSeed(1)
	steps := 60
	if long {
		steps = 500
	}
	rng := rand.New(rand.NewSource(seed))
	env := NewEnv(t)
	dirs := []string{"", "a", "a/b", "a/b/c", "d", "d/e", "build", "a/build"}
	files := []string{"f.txt", "g.log", "h.o", "sp ace.txt", "keep.log", "x.tmp", ".hidden"}
	ignores := []string{"*.log\n", "*.log\n!keep.log\n", "build/\n", "/f.txt\n", "b/\n", "*.o\n*.tmp\n", "e\n", "c/*.txt\n",
		"**/b/f.txt\n", "#only a comment\n", "a/**\n!a/b/\n", "*.txt\n!*/\n"}
	pick := func(list []string) string { return list[rng.Intn(len(list))] }
	path := func() string { return filepath.Join(pick(dirs), pick(files)) }
	for _, d := range dirs[1:4] {
		env.Write(filepath.Join(d, "f.txt"), d+"\n")
	}
	env.Commit("base")
	exclude := filepath.Join(env.CommonDir(), "info", "exclude")
	quick := 0
	captures := 0
	for step := 0; step < steps; step++ {
		switch rng.Intn(12) {
		case 0, 1, 2, 3:
			env.Write(path(), fmt.Sprintf("%d\n", rng.Int()))
		case 4:
			env.Remove(path())
		case 5:
			env.Remove(pick(dirs[1:]))
		case 6:
			require.NoError(t, os.MkdirAll(env.Path(pick(dirs)), 0o755))
		case 7:
			env.Write(filepath.Join(pick(dirs[:4]), ".gitignore"), pick(ignores))
		case 8:
			env.Remove(filepath.Join(pick(dirs), ".gitignore"))
		case 9:
			require.NoError(t, os.MkdirAll(filepath.Dir(exclude), 0o755))
			require.NoError(t, os.WriteFile(exclude, []byte(pick(ignores)), 0o644))
		case 10:
			env.GitRaw("add", "-A")
		case 11:
			p := path()
			if _, err := os.Lstat(env.Path(p)); err != nil {
				require.NoError(t, os.MkdirAll(filepath.Dir(env.Path(p)), 0o755))
				require.NoError(t, os.Symlink("target", env.Path(p)))
			}
		}
		if rng.Intn(2) == 0 {
			continue
		}
		captures++
		var res struct {
			Checkpoint string `json:"checkpoint"`
		}
		r := env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json")
		if r.Code == 0 {
			quick++
		} else {
			r = env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
		}
		r.JSON(t, &res)
		want := env.RecipeTree()
		got := env.refTree("refs/venom/checkpoints/a1/" + res.Checkpoint[1:])
		if want != got {
			t.Fatalf("seed %d step %d (quick %v): the capture differs from the recipe:\n%s\nstatus:\n%s", seed, step, r.Code == 0,
				env.GitRaw("diff-tree", "-r", want, got).Stdout, env.GitRaw("status", "--porcelain", "-uall").Stdout)
		}
	}
	t.Logf("seed %d: %d of %d captures without git status", seed, quick, captures)
	// The test must exercise the quick scan, not only its fallback.
	require.Greater(t, quick, captures/4, "too few captures went without git status")
	env.CheckObjects(t)
}

// TestCapture_MemoSeesTheAttributesFileTheConfigNames: the memo that spares
// hashing untracked files again holds only while the attributes that apply
// to them stay the same, also those of the file core.attributesFile names.
func TestCapture_MemoSeesTheAttributesFileTheConfigNames(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	attrs := filepath.Join(env.Home, "my-attributes")
	env.Git("config", "--global", "core.attributesFile", attrs)
	env.Git("config", "--global", "filter.upper.clean", "tr a-z A-Z")
	env.Git("config", "--global", "filter.upper.smudge", "cat")
	env.Write("u.txt", "lower\n") // untracked: listed at every capture
	// The memo keeps no path changed in the last two seconds.
	time.Sleep(2100 * time.Millisecond)
	env.Checkpoint("--agent=a1")
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 1))
	env.Checkpoint("--agent=a1") // reused, through the memo
	require.NoError(t, os.WriteFile(attrs, []byte("*.txt filter=upper\n"), 0o644))
	id := env.Checkpoint("--agent=a1")
	require.Equal(t, "k2", id, "the attributes changed what u.txt stores")
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 2))
}

// TestCapture_DamagedScanRecordIsMadeAgain: a scan record cut short or
// overwritten (a crash mid-write without fsync, a stray edit) is ignored:
// the capture goes to git status, gives the recipe's tree, and makes the
// record again.
func TestCapture_DamagedScanRecordIsMadeAgain(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("d/c.txt", "c\n")
	env.Commit("base")
	env.Checkpoint("--agent=a1")
	common := env.CommonDir()
	records, err := filepath.Glob(filepath.Join(common, "venom", "index", "*.scan"))
	require.NoError(t, err)
	require.Len(t, records, 1)
	for _, damage := range [][]byte{[]byte("VSR"), []byte("not a record at all"), {}} {
		require.NoError(t, os.WriteFile(records[0], damage, 0o644))
		env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json").Fails(t, 1, "failed.checkpoint_git")
		env.Write("d/new.txt", fmt.Sprintf("%q\n", damage))
		require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", mustAtoi(t, strings.TrimPrefix(env.Checkpoint("--agent=a1"), "k"))))
		env.Write("d/after.txt", fmt.Sprintf("after %q\n", damage))
		require.Equal(t, env.RecipeTree(), quickCapture(t, env))
	}
}

// TestCapture_QuickScanTakesManyChangedFiles: hundreds of tracked files
// whose size moved (a line appended to each) are changed for git too, and
// the quick scan stands for git status for them, however many; hundreds
// touched but of the same size, which only their bytes can tell unchanged,
// still go to git status (which refreshes their stat data), and the
// capture after that is quick again. Each tree is the recipe's.
func TestCapture_QuickScanTakesManyChangedFiles(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	const n = 300 // past the quick scan's bound on files it must hash to judge
	// Seconds older than the indexes written next: none is racy by git's
	// whole-second rule (docs/checkpoints.md#racy-stat-data), which on a
	// slow machine made hundreds of entries unsure and the quick scan
	// rightly give way to git status.
	older := time.Now().Add(-10 * time.Second)
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		env.Write(p, fmt.Sprintf("file %d\n", i))
		require.NoError(t, os.Chtimes(env.Path(p), older, older))
	}
	env.Commit("base")
	env.Checkpoint("--agent=a1") // records the folders
	time.Sleep(1100 * time.Millisecond)

	for round := 1; round <= 2; round++ {
		for i := 0; i < n; i++ {
			p := env.Path(fmt.Sprintf("d%d/f%03d.txt", i%7, i))
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = fmt.Fprintf(f, "appended in round %d\n", round)
			require.NoError(t, f.Close())
			require.NoError(t, err)
		}
		time.Sleep(1100 * time.Millisecond)
		require.Equal(t, env.RecipeTree(), quickCapture(t, env), "round %d", round)
	}

	// The same bytes again, with new stat data (an mtime in the past, so
	// that none is racy against the private index's next write).
	env.Git("checkout", "-q", "--", ".")
	earlier := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		require.NoError(t, os.Chtimes(env.Path(fmt.Sprintf("d%d/f%03d.txt", i%7, i)), earlier, earlier))
	}
	time.Sleep(1100 * time.Millisecond)
	r := env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json")
	require.NotEqual(t, 0, r.Code, "300 touched files of the same size went without git status: %s", r.Stdout)
	env.Checkpoint("--agent=a1")
	var res struct {
		Checkpoint string `json:"checkpoint"`
		Reused     bool   `json:"reused"`
	}
	env.VenomIn(env.Dir, noStatus, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	require.True(t, res.Reused, "git status refreshed the touched files: nothing to hash, the base tree")
}

// TestCapture_QuickScanAfterTheMemoOrTheCarry: a capture that had to run
// git status (its scan record gone) and took its tree from the carry or
// the memo still makes the next record from what status listed, and the
// capture after it runs no git status. The record's walk was compared
// with nothing and judged to disagree with git; after two such captures
// the tree kept to git status until the user's index changed.
func TestCapture_QuickScanAfterTheMemoOrTheCarry(t *testing.T) {
	t.Parallel()
	for _, shortcut := range []string{"carry", "memo"} {
		t.Run(shortcut, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("d/c.txt", "c\n")
			env.Commit("base")
			env.Write("d/u.txt", "untracked\n")
			env.Write("e/v.txt", "untracked too\n")
			env.Checkpoint("--agent=a1")
			// Past the racy window: the listing vouches for both files.
			time.Sleep(2100 * time.Millisecond)
			common := env.CommonDir()
			dropRecord := func() {
				records, err := filepath.Glob(filepath.Join(common, "venom", "index", "*.scan"))
				require.NoError(t, err)
				require.Len(t, records, 1)
				require.NoError(t, os.Remove(records[0]))
			}
			dropRecord()
			env.Checkpoint("--agent=a1") // git status, then the carry
			if shortcut == "memo" {
				dropRecord()
				env.Checkpoint("--agent=a1") // git status, then the memo
			}
			require.Equal(t, env.RecipeTree(), quickCapture(t, env))
		})
	}
}

// TestCapture_ManyChangesKeepTheScanRecord: a capture that gives way to
// git status because more tracked files moved than the quick scan hashes
// still brings the scan record's moved folders up to date from what
// status listed, so the next capture reads none of them again; its tree is
// the recipe's, with the files added beside the many moved. Left stale,
// the record had a rollback's dry run after such a turn read every folder
// the turn had touched.
func TestCapture_ManyChangesKeepTheScanRecord(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	const n = 300 // past the quick scan's bound on files it must hash to judge
	for i := 0; i < n; i++ {
		env.Write(fmt.Sprintf("d%d/f%03d.txt", i%7, i), fmt.Sprintf("file %d\n", i))
	}
	env.Commit("base")
	env.Checkpoint("--agent=a1") // records the folders
	env.Write("d1/new.txt", "new in d1\n")
	env.Write("d3/sub/new.txt", "new in a new folder of d3\n")
	earlier := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		require.NoError(t, os.Chtimes(env.Path(fmt.Sprintf("d%d/f%03d.txt", i%7, i)), earlier, earlier))
	}
	// Past the folders' racy window (2 s), so that what the next capture
	// lists of them holds.
	time.Sleep(2100 * time.Millisecond)
	env.Checkpoint("--agent=a1") // 300 touched files of the same size: git status

	timings := filepath.Join(env.Root, "timings")
	extra := append([]string{"VENOM_TEST_TIMINGS=" + timings}, noStatus...)
	var res struct {
		Checkpoint string `json:"checkpoint"`
	}
	env.VenomIn(env.Dir, extra, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
	require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/a1/"+res.Checkpoint[1:]))
	b, err := os.ReadFile(timings)
	require.NoError(t, err)
	require.Contains(t, string(b), "quick-relisted 0\n", "no folder read again after git status listed them")
}
