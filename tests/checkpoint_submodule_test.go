package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSubRepo makes a repository with one commit beside the test's repo.
func (e *Env) newSubRepo(name string) string {
	e.t.Helper()
	dir := filepath.Join(e.Root, name)
	e.run(e.Root, nil, "git", "init", "-q", dir).OK(e.t)
	e.run(dir, nil, "git", "commit", "-q", "--allow-empty", "-m", "sub").OK(e.t)
	return dir
}

func TestCheckpoint_SubmodulesAndNestedRepositories(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	src := env.newSubRepo("src")
	env.run(src, nil, "sh", "-c", "echo s > s.txt && git add s.txt && git commit -q -m s").OK(t)
	env.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sm")
	env.Git("-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "clean")
	env.Commit("submodules")
	smHead := env.run(env.Path("sm"), nil, "git", "rev-parse", "HEAD").Stdout[:40]
	cleanHead := env.run(env.Path("clean"), nil, "git", "rev-parse", "HEAD").Stdout[:40]
	// A nested repository nobody added, with a commit.
	env.run(env.Root, nil, "git", "init", "-q", env.Path("nested")).OK(t)
	env.Write("nested/n.txt", "n\n")
	env.run(env.Path("nested"), nil, "sh", "-c", "git add n.txt && git commit -q -m n").OK(t)
	nestedHead := env.run(env.Path("nested"), nil, "git", "rev-parse", "HEAD").Stdout[:40]
	// sm has a change to a tracked file: dirty, but its commit is unchanged.
	env.Write("sm/s.txt", "dirty\n")
	env.Write("sm/untracked.txt", "inside the submodule\n")
	env.Write("top.txt", "top\n")
	want := env.RecipeTree()
	snap := env.Snapshot()
	// The submodules' and the nested repository's indexes are their users'
	// too (invariant 1): not even a stat refresh may rewrite them.
	indexes := []string{env.Path(".git/modules/sm/index"), env.Path(".git/modules/clean/index"),
		env.Path("nested/.git/index")}
	var before []string
	for _, p := range indexes {
		before = append(before, fileHash(p))
	}

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	for i, p := range indexes {
		assert.Equal(t, before[i], fileHash(p), "%s was rewritten", p)
	}
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	// Gitlinks, nothing inside.
	ref := "refs/venom/checkpoints/a1/1"
	assert.Equal(t, "160000 commit "+smHead+"\tsm", env.Git("ls-tree", ref, "sm"))
	assert.Equal(t, "160000 commit "+cleanHead+"\tclean", env.Git("ls-tree", ref, "clean"))
	assert.Equal(t, "160000 commit "+nestedHead+"\tnested", env.Git("ls-tree", ref, "nested"))
	assert.NotEqual(t, 0, env.GitRaw("cat-file", "-e", ref+":nested/n.txt").Code)
	assert.NotEqual(t, 0, env.GitRaw("cat-file", "-e", ref+":sm/untracked.txt").Code)
	// docs/checkpoints.md#what-a-capture-holds: dirty when the nested HEAD differs from the recorded
	// gitlink or tracked files changed.
	require.Equal(t, []SubmoduleLink{
		{Path: "clean", Commit: cleanHead, Dirty: false},
		{Path: "nested", Commit: nestedHead, Dirty: false},
		{Path: "sm", Commit: smHead, Dirty: true},
	}, env.Item(t, "a1", "k1").Repos[0].Submodules)

	// A new commit in the submodule: the gitlink follows its HEAD, dirty
	// since the superproject records another commit. The nested repo gets a
	// tracked change.
	env.run(env.Path("sm"), nil, "sh", "-c", "git checkout -q s.txt && git commit -q --allow-empty -m moved").OK(t)
	smMoved := env.run(env.Path("sm"), nil, "git", "rev-parse", "HEAD").Stdout[:40]
	env.Write("nested/n.txt", "changed\n")
	want = env.RecipeTree()
	snap = env.Snapshot()
	res := env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, "k2", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	assert.Equal(t, "160000 commit "+smMoved+"\tsm", env.Git("ls-tree", "refs/venom/checkpoints/a1/2", "sm"))
	require.Equal(t, []SubmoduleLink{
		{Path: "clean", Commit: cleanHead, Dirty: false},
		{Path: "nested", Commit: nestedHead, Dirty: true},
		{Path: "sm", Commit: smMoved, Dirty: true},
	}, env.Item(t, "a1", "k2").Repos[0].Submodules)
}
