package tests

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCapture_PrivateIndexMatchesTheRecipe drives random edits, git
// commands and captures, and checks after every capture that the checkpoint
// holds exactly the tree docs/checkpoints.md#how-a-capture-runs's git recipe gives for that state. The
// private index and its memo must never make a capture differ from it.
func TestCapture_PrivateIndexMatchesTheRecipe(t *testing.T) {
	t.Parallel()
	seed, long := randomSeed(1)
	steps := 40
	if long {
		steps = 400
	}
	rng := rand.New(rand.NewSource(seed))
	env := NewEnv(t)
	names := []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g.log", "h/i.txt", "new.txt", "d/new.txt",
		"sp ace.txt", `"q.txt`, "x.up", "line\nbreak.txt", "cr.txt\r", `back\slash.txt`}
	for _, n := range names[:4] {
		env.Write(n, n+"\n")
	}
	// A clean filter: the blob is not the file's bytes.
	env.Git("config", "filter.upper.clean", "tr a-z A-Z")
	env.Git("config", "filter.upper.smudge", "cat")
	env.Commit("base")
	// put writes a regular file at name, whatever was there.
	put := func(name, content string) {
		if fi, err := os.Lstat(env.Path(name)); err == nil && !fi.Mode().IsRegular() {
			env.Remove(name)
		}
		env.Write(name, content)
	}
	n := 0
	for step := 0; step < steps; step++ {
		name := names[rng.Intn(len(names))]
		switch op := rng.Intn(18); op {
		case 0, 1, 2:
			put(name, fmt.Sprintf("%s %d\n", name, rng.Int()))
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
			put("a.txt", fmt.Sprintf("assumed %d\n", step))
		case 10:
			env.GitRaw("rm", "-q", "--cached", "-r", "--ignore-unmatch", name)
		case 11:
			// A file becomes a link (links are stored as their target).
			env.Remove(name)
			require.NoError(t, os.MkdirAll(filepath.Dir(env.Path(name)), 0o755))
			require.NoError(t, os.Symlink(fmt.Sprintf("target-%d", rng.Intn(3)), env.Path(name)))
		case 12:
			// A file becomes a folder.
			env.Remove(name)
			env.Write(name+"/inner.txt", fmt.Sprintf("inner %d\n", step))
		case 13:
			switch rng.Intn(3) {
			case 0:
				env.Write(".gitattributes", "*.up filter=upper\n*.txt text eol=lf\n")
			case 1:
				env.Write(".gitattributes", "*.txt filter=upper\n")
			default:
				env.Remove(".gitattributes")
			}
			// New attributes are committed with the files renormalized:
			// otherwise a file git deems racily clean is hashed again by
			// the recipe's git add under the new attributes while git
			// status (ours) keeps its blob, and both are git's answer.
			env.GitRaw("add", "--renormalize", ".")
			env.Commit(fmt.Sprintf("attributes %d", step))
		case 14:
			put(name, fmt.Sprintf("crlf %d\r\nline two\r\n", rng.Int()))
		case 15:
			if fi, err := os.Stat(env.Path(name)); err == nil && fi.Mode().IsRegular() {
				_ = os.Chmod(env.Path(name), 0o644)
			}
		case 17:
			// Large enough for the private index to move on (more bytes
			// than twice the index).
			put(name, strings.Repeat(fmt.Sprintf("%s %d\n", name, step), 300+rng.Intn(300)))
		case 16:
			// A nested repository: the capture holds its commit.
			if _, err := os.Lstat(env.Path("nested")); err != nil {
				env.Write("nested/n.txt", "nested\n")
				for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "n"}} {
					c := exec.Command("git", args...)
					c.Dir = env.Path("nested")
					out, err := c.CombinedOutput()
					require.NoError(t, err, "%s", out)
				}
			} else {
				env.Remove("nested")
			}
		}
		if rng.Intn(3) == 0 {
			continue
		}
		var res struct {
			Checkpoint string `json:"checkpoint"`
			Reused     bool   `json:"reused"`
		}
		env.Venom("checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
		// The recipe after the capture: it writes its objects, and a
		// capture writes only those that are not there yet.
		want := env.RecipeTree()
		if !res.Reused {
			n++
			require.Equal(t, fmt.Sprintf("k%d", n), res.Checkpoint)
		}
		got := env.refTree("refs/venom/checkpoints/a1/" + res.Checkpoint[1:])
		if want != got {
			t.Fatalf("seed %d step %d: the capture differs from the recipe:\n%s\nstatus:\n%s", seed, step,
				env.GitRaw("diff-tree", "-r", want, got).Stdout, env.GitRaw("status", "--porcelain").Stdout+env.GitRaw("ls-files", "-s").Stdout)
		}
	}
	// Every pack and object the captures wrote passes git's checks.
	env.CheckObjects(t)
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

// TestCapture_PrivateIndexMovesOn: once the tracked files that differ from
// the private index come to more bytes than twice the index, the private
// index takes their content and its base tree follows; captures stay the
// recipe's, and the private index never takes an untracked file.
func TestCapture_PrivateIndexMovesOn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Write("d/b.txt", "two\n")
	env.Commit("base")
	require.Equal(t, "k1", env.Checkpoint("--agent=a1"))
	metas, err := filepath.Glob(filepath.Join(env.CommonDir(), "venom", "index", "*.json"))
	require.NoError(t, err)
	require.Len(t, metas, 1)
	meta := func() (tree string) {
		var m struct {
			Tree string `json:"tree"`
		}
		b, err := os.ReadFile(metas[0])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &m))
		return m.Tree
	}
	seedTree := meta()
	require.Equal(t, env.Git("rev-parse", "HEAD^{tree}"), seedTree)

	// A small change leaves the private index as it was.
	env.Write("a.txt", "small\n")
	want := env.RecipeTree()
	require.Equal(t, "k2", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	require.Equal(t, seedTree, meta())

	// A large one moves it on: the base is then the tracked files' new
	// content, without the untracked file captured beside them.
	env.Write("d/b.txt", strings.Repeat("large line\n", 2000))
	env.Write("untracked.txt", strings.Repeat("untracked line\n", 2000))
	want = env.RecipeTree()
	require.Equal(t, "k3", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 3))
	moved := meta()
	require.NotEqual(t, seedTree, moved)
	require.Equal(t, env.Git("rev-parse", env.CheckpointTree("a1", 3)+":d/b.txt"), env.Git("rev-parse", moved+":d/b.txt"))
	require.Equal(t, env.Git("rev-parse", env.CheckpointTree("a1", 3)+":a.txt"), env.Git("rev-parse", moved+":a.txt"))
	require.NotContains(t, env.Git("ls-tree", "-r", "--name-only", moved), "untracked.txt")
	idx := strings.TrimSuffix(metas[0], ".json") + ".index"
	require.NotContains(t, env.run(env.Dir, []string{"GIT_INDEX_FILE=" + idx}, "git", "ls-files").Stdout, "untracked.txt")

	// Later captures build on the moved base and still equal the recipe,
	// including a file put back to the content the user's index has.
	env.Write("d/b.txt", "two\n")
	env.Remove("untracked.txt")
	env.Write("new.txt", "new\n")
	want = env.RecipeTree()
	require.Equal(t, "k4", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 4))
	env.Remove("a.txt")
	want = env.RecipeTree()
	require.Equal(t, "k5", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 5))
}

// TestCapture_PrivateIndexKilledMovingOn: a capture killed after the
// private index took the tracked files' new content, before its base tree
// was written down beside it. The next capture must not build on the old
// base with the new index: it would put the old content back in the tree.
func TestCapture_PrivateIndexKilledMovingOn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Write("d/b.txt", "two\n")
	env.Commit("base")
	require.Equal(t, "k1", env.Checkpoint("--agent=a1"))

	// Written an hour ago: the index the killed capture moved on then
	// vouches for it by its stat data alone, as it would a minute later.
	env.Write("d/b.txt", strings.Repeat("large line\n", 2000))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(env.Path("d/b.txt"), old, old))
	Kill9(t, env.StartPaused("private-moved-on", nil, "checkpoint", "--agent=a1", "--json"))

	env.Write("a.txt", "after\n")
	require.NoError(t, os.Chtimes(env.Path("a.txt"), old, old))
	want := env.RecipeTree()
	require.Equal(t, "k2", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 2), "d/b.txt: %s",
		env.Git("rev-parse", env.CheckpointTree("a1", 2)+":d/b.txt"))
	require.Equal(t, "k2", env.Checkpoint("--agent=a1"))
	env.Write("d/new.txt", "new\n")
	want = env.RecipeTree()
	require.Equal(t, "k3", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 3))
}

// TestCapture_PrivateIndexSteadyWritesNothing: a capture of a tree that
// did not change since the last one writes no metadata for its private
// index (a write replaces the file: the inode would change), and the
// memo it keeps still gives the recipe's tree.
func TestCapture_PrivateIndexSteadyWritesNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Commit("base")
	env.Write("a.txt", "two\n")
	env.Write("new.txt", "new\n")
	// Past the second of every write (change times included): a path
	// written in the scan's second is racy, left out of the memo's
	// listing, and the next capture would rightly keep it.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(2 * time.Second)))
	want := env.RecipeTree()
	require.Equal(t, "k1", env.Checkpoint("--agent=a1"))
	metas, err := filepath.Glob(env.Path(".git/venom/index/*.json"))
	require.NoError(t, err)
	require.Len(t, metas, 1)
	ino := func() uint64 {
		var st syscall.Stat_t
		require.NoError(t, syscall.Stat(metas[0], &st))
		return st.Ino
	}
	before := ino()
	for i := 0; i < 2; i++ {
		require.Equal(t, "k1", env.Checkpoint("--agent=a1"))
		require.Equal(t, before, ino(), "capture %d wrote the metadata again", i+2)
	}
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	env.Write("new.txt", "newer\n")
	want = env.RecipeTree()
	require.Equal(t, "k2", env.Checkpoint("--agent=a1"))
	require.Equal(t, want, env.CheckpointTree("a1", 2))
}
