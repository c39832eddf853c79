package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Layouts and environments: the right repository, tree and index,
// or a clean refusal.

func TestRobust_SeparateGitDirAndLinkedWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	gd := filepath.Join(env.Root, "separate.git")
	env.Git("init", "-q", "--separate-git-dir="+gd)
	fi, err := os.Lstat(env.Path(".git"))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), ".git is a gitdir file now")
	env.Write("a.txt", "changed\n")
	env.Write("b.txt", "new\n")
	env.CaptureLikeRecipe(t, "a1")
	_, err = os.Stat(filepath.Join(gd, "venom", "log.jsonl"))
	require.NoError(t, err, "the state lives in the separate git dir")

	wt := filepath.Join(env.Root, "linked")
	env.Git("worktree", "add", "-q", "-b", "feature", wt)
	w := env.At(wt)
	w.Write("a.txt", "in the linked worktree\n")
	w.Write("c.txt", "only here\n")
	w.CaptureLikeRecipe(t, "w1", "--isolation=worktree")
	// Refs and log are shared with the main worktree.
	require.Equal(t, w.Git("rev-parse", "refs/venom/checkpoints/w1/1"), env.Git("rev-parse", "refs/venom/checkpoints/w1/1"))
	rec := w.lastTaken()
	require.Equal(t, "feature", *rec.Repos[0].Branch)
	// Each worktree's capture stays its own.
	env.Write("a.txt", "main again\n")
	env.CaptureLikeRecipe(t, "a1")
}

func TestRobust_CoreWorktreeWithAnExplicitGitDir(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	gd := filepath.Join(env.Root, "meta.git")
	work := filepath.Join(env.Root, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	env.Git("init", "-q", "--bare", gd)
	env.Git("--git-dir="+gd, "config", "core.bare", "false")
	env.Git("--git-dir="+gd, "config", "core.worktree", work)
	w := env.At(work).With("GIT_DIR=" + gd)
	w.Write("x.txt", "x\n")
	w.Commit("first")
	w.Write("x.txt", "changed\n")
	w.Write("y.txt", "y\n")
	w.CaptureLikeRecipe(t, "a1")
	// git --git-dir=X venom-checkpoint, from a subfolder, works the same.
	w.Write("sub/z.txt", "z\n")
	r := env.run(filepath.Join(work, "sub"), nil, "git", "--git-dir="+gd, "venom-checkpoint", "--agent=a1", "--json")
	r.OK(t)
	require.Equal(t, w.RecipeTree(), w.refTree("refs/venom/checkpoints/a1/2"))
}

func TestRobust_BareAndSha256AreRefused(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	bare := filepath.Join(env.Root, "bare.git")
	env.Git("init", "-q", "--bare", bare)
	for _, cmd := range [][]string{{"checkpoint", "--agent=a1"}, {"checkpoint", "list"}, {"diff", "--from=k1"}} {
		env.VenomIn(bare, nil, cmd[0], append(cmd[1:], "--json")...).Fails(t, 10, "unsupported.checkpoint_no_repo")
	}

	sha := filepath.Join(env.Root, "sha256")
	env.Git("init", "-q", "--object-format=sha256", sha)
	s := env.At(sha)
	s.Write("a.txt", "a\n")
	s.Commit("first")
	s.Write("a.txt", "b\n")
	snap := s.Snapshot()
	for _, cmd := range [][]string{{"checkpoint", "--agent=a1"}, {"checkpoint", "list"}, {"diff", "--from=k1"}} {
		s.Venom(cmd[0], append(cmd[1:], "--json")...).Fails(t, 10, "unsupported.object_format")
	}
	s.AssertUntouched(t, snap)
	_, err := os.Stat(filepath.Join(sha, ".git", "venom"))
	require.True(t, os.IsNotExist(err), "a refusal leaves no state behind")
}

func TestRobust_UnbornDetachedAndOrphanHeads(t *testing.T) {
	t.Parallel()
	t.Run("unborn with untracked files", func(t *testing.T) {
		t.Parallel()
		env := NewBareEnv(t)
		env.Write("a.txt", "a\n")
		env.Write("d/b.txt", "b\n")
		commit := env.CaptureLikeRecipe(t, "a1")
		require.Equal(t, "", env.Git("log", "--format=%P", "-1", commit), "no parent on an unborn HEAD")
		rec := env.lastTaken()
		require.Nil(t, rec.Repos[0].Head)
		require.Equal(t, "main", *rec.Repos[0].Branch)
		require.NotEqual(t, 0, env.GitRaw("rev-parse", "-q", "--verify", "HEAD").Code, "HEAD stays unborn")
	})
	t.Run("detached at a tag", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t)
		env.Git("tag", "-a", "-m", "v1", "v1")
		env.Write("a.txt", "after the tag\n")
		env.Commit("later")
		env.Git("checkout", "-q", "v1")
		env.Write("a.txt", "edited while detached\n")
		commit := env.CaptureLikeRecipe(t, "a1")
		tagged := env.Git("rev-parse", "v1^{commit}")
		require.Equal(t, tagged, env.Git("rev-parse", commit+"^"))
		rec := env.lastTaken()
		require.Equal(t, tagged, *rec.Repos[0].Head)
		require.Nil(t, rec.Repos[0].Branch, "no branch when detached")
	})
	t.Run("HEAD on a branch that does not exist yet", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t)
		env.Git("checkout", "-q", "--orphan", "fresh")
		env.Write("new.txt", "new\n")
		commit := env.CaptureLikeRecipe(t, "a1")
		require.Equal(t, "", env.Git("log", "--format=%P", "-1", commit))
		rec := env.lastTaken()
		require.Nil(t, rec.Repos[0].Head)
		require.Equal(t, "fresh", *rec.Repos[0].Branch)
		require.Equal(t, "hello", env.Git("cat-file", "-p", commit+":README.md"), "the index's files are captured")
	})
}

func TestRobust_LeakedGitVariables(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".gitignore", "*.log\n")
	env.Write("sub/a.txt", "a\n")
	env.Commit("base")
	other := env.At(filepath.Join(env.Root, "other"))
	require.NoError(t, os.MkdirAll(other.Dir, 0o755))
	other.Git("init", "-q")
	other.Write("o.txt", "other\n")
	other.Commit("other")
	otherGit := filepath.Join(other.Dir, ".git")
	otherSnap := other.Snapshot()
	env.Write("sub/a.txt", "changed\n")
	snap := env.Snapshot()

	t.Run("GIT_DIR of another repository", func(t *testing.T) {
		env.VenomIn(env.Dir, []string{"GIT_DIR=" + otherGit}, "checkpoint", "--agent=a1", "--json").
			Fails(t, 10, "unsupported.environment")
	})
	t.Run("GIT_DIR of this repository from a subfolder", func(t *testing.T) {
		// git would take the subfolder for the top level.
		env.VenomIn(env.Path("sub"), []string{"GIT_DIR=" + env.Path(".git")}, "checkpoint", "--agent=a1", "--json").
			Fails(t, 10, "unsupported.environment")
	})
	t.Run("GIT_WORK_TREE of another repository", func(t *testing.T) {
		env.VenomIn(env.Dir, []string{"GIT_WORK_TREE=" + other.Dir}, "checkpoint", "--agent=a1", "--json").
			Fails(t, 10, "unsupported.environment")
	})
	t.Run("GIT_COMMON_DIR of another repository", func(t *testing.T) {
		env.VenomIn(env.Dir, []string{"GIT_COMMON_DIR=" + otherGit}, "checkpoint", "--agent=a1", "--json").
			Fails(t, 10, "unsupported.environment")
	})
	t.Run("GIT_INDEX_FILE of another repository", func(t *testing.T) {
		env.VenomIn(env.Dir, []string{"GIT_INDEX_FILE=" + filepath.Join(otherGit, "index")}, "checkpoint",
			"--agent=a1", "--json").Fails(t, 10, "unsupported.environment")
	})
	t.Run("GIT_OBJECT_DIRECTORY", func(t *testing.T) {
		env.VenomIn(env.Dir, []string{"GIT_OBJECT_DIRECTORY=" + filepath.Join(otherGit, "objects")}, "checkpoint",
			"--agent=a1", "--json").Fails(t, 10, "unsupported.environment")
	})
	env.AssertUntouched(t, snap)
	other.AssertUntouched(t, otherSnap)
	require.Empty(t, env.Git("for-each-ref", "refs/venom"))
	require.Empty(t, other.Git("for-each-ref", "refs/venom"))
	_, err := os.Stat(filepath.Join(otherGit, "venom"))
	require.True(t, os.IsNotExist(err), "nothing was written into the other repository")

	t.Run("GIT_DIR and GIT_WORK_TREE of this repository", func(t *testing.T) {
		r := env.VenomIn(env.Path("sub"), []string{"GIT_DIR=" + env.Path(".git"), "GIT_WORK_TREE=" + env.Dir},
			"checkpoint", "--agent=a1", "--json")
		r.OK(t)
		require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 1))
	})
	t.Run("GIT_DIR=.git from the top, as git's own hooks have it", func(t *testing.T) {
		env.Write("sub/a.txt", "changed twice\n")
		env.With("GIT_DIR=.git").CaptureLikeRecipe(t, "a1")
	})
	t.Run("a relative GIT_INDEX_FILE is relative to the top level", func(t *testing.T) {
		// An index that tracks an ignored file: only a capture that reads
		// it holds the file.
		env.Write("tracked.log", "tracked in the other index only\n")
		alt := env.With("GIT_INDEX_FILE=.git/alt.index")
		alt.Git("read-tree", "HEAD")
		alt.Git("add", "-f", "tracked.log")
		want := alt.RecipeTree()
		altSnap := alt.Snapshot()
		r := env.VenomIn(env.Path("sub"), []string{"GIT_INDEX_FILE=.git/alt.index"}, "checkpoint", "--agent=a1", "--json")
		r.OK(t)
		alt.AssertUntouched(t, altSnap)
		var res struct{ Checkpoint string }
		r.JSON(t, &res)
		require.Equal(t, want, env.refTree("refs/venom/checkpoints/a1/"+res.Checkpoint[1:]))
		require.Equal(t, "tracked in the other index only",
			env.Git("cat-file", "-p", "refs/venom/checkpoints/a1/"+res.Checkpoint[1:]+":tracked.log"))
	})
}

func TestRobust_IndexLockHeldCaptureLeavesItAlone(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	lock := env.Path(".git/index.lock")
	require.NoError(t, os.WriteFile(lock, []byte("another git is writing"), 0o644))
	env.Write("a.txt", "changed\n")
	env.Write("b.txt", "new\n")
	env.CaptureLikeRecipe(t, "a1") // Snapshot compares index.lock's bytes
	env.Venom("diff", "--agent=a1", "--from=k1", "--json").OK(t)
	b, err := os.ReadFile(lock)
	require.NoError(t, err)
	require.Equal(t, "another git is writing", string(b))
}
