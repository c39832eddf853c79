package capture

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/repo"
)

// world is a repository for capture's unit tests (clitest's hermetic
// one), with git's own view of the tree as the reference: what
// `git add -A` and `git write-tree` give in a throwaway index.
type world struct {
	*clitest.World
	t *testing.T
}

func newWorld(t *testing.T) *world {
	w := &world{World: clitest.New(t), t: t}
	w.Write(".gitignore", "*.log\nbuild/\n")
	w.Write("src/a.go", "package a\n")
	w.Write("src/b.go", "package b\n")
	w.Write("README", "hello\n")
	w.Git("add", "-A")
	w.Git("commit", "-qm", "init")
	return w
}

// gitTree is the tree git itself makes of the work tree, the user's index
// and HEAD left alone.
func (w *world) gitTree() string {
	w.t.Helper()
	idx := filepath.Join(w.t.TempDir(), "index")
	env := append(w.Environ[:len(w.Environ):len(w.Environ)], "GIT_INDEX_FILE="+idx)
	gittest.Run(w.t, w.Dir, "", env, "read-tree", "HEAD")
	gittest.Run(w.t, w.Dir, "", env, "add", "-A")
	return gittest.Run(w.t, w.Dir, "", env, "write-tree")
}

// take captures the tree as a checkpoint command does and returns the
// tree's id, checking that the objects are stored.
func (w *world) take() string {
	w.t.Helper()
	ctx := context.Background()
	r, err := repo.Open(ctx, w.Dir, w.Environ)
	require.NoError(w.t, err)
	tmp := filepath.Join(r.StateDir, "tmp")
	require.NoError(w.t, os.MkdirAll(tmp, 0o700))
	snap, err := Take(ctx, r, tmp, Limits{MaxFileBytes: 1 << 30, MaxTotalBytes: 1 << 40})
	require.NoError(w.t, err)
	tree := snap.Tree.String()
	// One git: the object is there, peels to a tree, and every subtree
	// is readable.
	w.Git("ls-tree", "-r", tree+"^{tree}")
	return tree
}

func fileSum(t *testing.T, p string) [32]byte {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// Take's tree is git's own tree of the work tree after every kind of
// change, capture after capture (the private index, its memo and the
// quick scan all take part from the second), and the user's index, HEAD
// and branch are never written.
func TestTake_AgreesWithGitAddAll(t *testing.T) {
	w := newWorld(t)
	index := filepath.Join(w.Dir, ".git", "index")
	before := fileSum(t, index)
	head := w.Git("rev-parse", "HEAD")
	branch := w.Git("symbolic-ref", "HEAD")
	steps := []struct {
		name string
		do   func()
	}{
		{"nothing changed", func() {}},
		{"tracked file edited", func() { w.Write("src/a.go", "package a\n\nvar X = 1\n") }},
		{"untracked files in a new folder", func() { w.Write("new/x.txt", "x\n"); w.Write("new/deep/y.txt", "y\n") }},
		{"ignored files", func() { w.Write("debug.log", "noise\n"); w.Write("build/out.o", "bin\n") }},
		{"tracked file deleted", func() { require.NoError(t, os.Remove(filepath.Join(w.Dir, "src/b.go"))) }},
		{"executable bit", func() { require.NoError(t, os.Chmod(filepath.Join(w.Dir, "README"), 0o755)) }},
		{"symbolic link", func() { require.NoError(t, os.Symlink("src/a.go", filepath.Join(w.Dir, "link"))) }},
		{"file becomes a folder", func() {
			require.NoError(t, os.Remove(filepath.Join(w.Dir, "README")))
			w.Write("README/inner", "now a folder\n")
		}},
		{"empty folder", func() { require.NoError(t, os.MkdirAll(filepath.Join(w.Dir, "empty"), 0o755)) }},
		{"same size rewrite", func() { w.Write("src/a.go", "package a\n\nvar Y = 2\n") }},
	}
	for _, s := range steps {
		s.do()
		require.Equal(t, w.gitTree(), w.take(), "after %s", s.name)
	}
	require.Equal(t, before, fileSum(t, index), "the user's index is not written")
	require.Equal(t, head, w.Git("rev-parse", "HEAD"))
	require.Equal(t, branch, w.Git("symbolic-ref", "HEAD"))
}

// Random edits against git's own tree, seed printed, capture after each
// batch.
func TestTake_RandomEditsAgreeWithGit(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("VENOM_TEST_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (VENOM_TEST_SEED=%d reruns it)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	w := newWorld(t)
	names := []string{"a", "b", "c.log", "d", "build/e", "f/g", "f/h/i", "j k", "ü"}
	for step := 0; step < 25; step++ {
		for k := rng.Intn(4) + 1; k > 0; k-- {
			p := names[rng.Intn(len(names))]
			full := filepath.Join(w.Dir, p)
			switch rng.Intn(4) {
			case 0:
				_ = os.RemoveAll(full)
			case 1:
				_ = os.RemoveAll(full)
				if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
					_ = os.Symlink(strings.Repeat("../", strings.Count(p, "/"))+"a", full)
				}
			default:
				if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
					_ = os.RemoveAll(full)
				}
				if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
					_ = os.WriteFile(full, []byte(fmt.Sprintf("%s %d\n", p, rng.Intn(3))), 0o644)
				}
			}
		}
		if rng.Intn(3) == 0 {
			w.Git("add", "-A")
			w.Git("commit", "-qm", fmt.Sprintf("step %d", step), "--allow-empty")
		}
		require.Equal(t, w.gitTree(), w.take(), "seed %d step %d", seed, step)
	}
}
