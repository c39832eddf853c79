package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Repository features: every capture equals the recipe of
// docs/checkpoints.md#how-a-capture-runs for the same state, whatever
// filters, index format or caches the user has.

func TestRobust_LFSIsCapturedAsItsPointer(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Skip("git-lfs is not installed (tests/run installs it)")
	}
	env := NewEnv(t)
	env.Git("lfs", "install", "--local")
	env.Write(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n")
	env.Write("big.bin", strings.Repeat("binary content\x00", 100))
	env.Commit("lfs")
	env.Write("big.bin", strings.Repeat("changed content\x00", 100))
	env.Write("new.bin", "a new lfs file\n")
	commit := env.CaptureLikeRecipe(t, "a1")
	for _, p := range []string{"big.bin", "new.bin"} {
		blob := env.Git("cat-file", "-p", commit+":"+p)
		require.True(t, strings.HasPrefix(blob, "version https://git-lfs.github.com/spec/v1"), "%s: %q", p, blob)
	}
}

func TestRobust_FiltersEolAndIdentAreCapturedCleaned(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// A clean/smudge pair that upper-cases on the way in.
	env.Git("config", "filter.up.clean", "tr a-z A-Z")
	env.Git("config", "filter.up.smudge", "cat")
	env.Git("config", "filter.up.required", "true")
	env.Write(".gitattributes", "*.up filter=up\n*.crlf text eol=crlf\n*.id ident\n")
	env.Write("a.up", "lower\n")
	env.Write("b.crlf", "one\r\ntwo\r\n")
	env.Write("c.id", "$Id$\n")
	env.Commit("filters")
	env.Write("a.up", "still lower\n")
	env.Write("b.crlf", "one\r\ntwo\r\nthree\r\n")
	env.Write("c.id", "$Id: 0123456789abcdef $\nmore\n")
	env.Write("d.up", "new one\n")
	commit := env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "STILL LOWER", env.Git("cat-file", "-p", commit+":a.up"))
	require.Equal(t, "one\ntwo\nthree", env.Git("cat-file", "-p", commit+":b.crlf"))
	require.Equal(t, "$Id$\nmore", env.Git("cat-file", "-p", commit+":c.id"))

	// core.autocrlf=true: CRLF in the tree, LF in the checkpoint.
	env.Git("config", "core.autocrlf", "true")
	env.Write("e.txt", "x\r\ny\r\n")
	commit = env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "x\ny", env.Git("cat-file", "-p", commit+":e.txt"))
}

func TestRobust_IndexFormatsAndCaches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(env *Env)
	}{
		{"split index", func(env *Env) { env.Git("update-index", "--split-index") }},
		{"split index by config", func(env *Env) {
			env.Git("config", "core.splitIndex", "true")
			env.Git("update-index", "--split-index")
		}},
		{"index version 4", func(env *Env) { env.Git("update-index", "--index-version", "4") }},
		{"untracked cache", func(env *Env) {
			env.Git("config", "core.untrackedCache", "true")
			env.Git("update-index", "--untracked-cache")
			env.Git("status", "--porcelain")
		}},
		{"assume-unchanged and intent-to-add", func(env *Env) {
			env.Git("update-index", "--assume-unchanged", "d/one.txt")
			env.Write("ita.txt", "intent\n")
			env.Git("add", "-N", "ita.txt")
		}},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("d/one.txt", "1\n")
			env.Write("d/two.txt", "2\n")
			env.Commit("two")
			tc.setup(env)
			env.Write("d/one.txt", "1 changed\n")
			env.Write("d/three.txt", "3\n")
			env.Remove("d/two.txt")
			env.CaptureLikeRecipe(t, "a1")
			env.Write("d/one.txt", "1 changed again\n")
			env.Write("u/new.txt", "untracked\n")
			env.CaptureLikeRecipe(t, "a1")
			env.Git("add", "-A")
			env.Write("d/three.txt", "3 changed\n")
			env.CaptureLikeRecipe(t, "a1")
		})
	}
}

func TestRobust_SparseCheckoutWithASparseIndex(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("in/a.txt", "a\n")
	env.Write("out/b.txt", "b\n")
	env.Write("out/deep/c.txt", "c\n")
	env.Commit("sparse")
	env.Git("sparse-checkout", "init", "--cone", "--sparse-index")
	env.Git("sparse-checkout", "set", "in")
	_, err := os.Stat(env.Path("out"))
	require.True(t, os.IsNotExist(err), "out/ is outside the cone")
	env.Write("in/a.txt", "a changed\n")
	env.Write("in/new.txt", "new\n")
	commit := env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "b", env.Git("cat-file", "-p", commit+":out/b.txt"), "skip-worktree paths keep the index's version")
	rec := env.lastTaken()
	require.Len(t, rec.Repos[0].Skipped, 1)
	require.Equal(t, "out/", rec.Repos[0].Skipped[0].Path)
	require.Equal(t, "skip_worktree", rec.Repos[0].Skipped[0].Reason)
	_, err = os.Stat(env.Path("out"))
	require.True(t, os.IsNotExist(err), "a capture never touches paths outside the cone")

	// Files someone wrote outside the cone anyway stay out.
	env.Write("out/b.txt", "written outside the cone\n")
	env.Write("out/untracked.txt", "u\n")
	env.Write("out/deep/x/y.txt", "y\n")
	commit = env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "b", env.Git("cat-file", "-p", commit+":out/b.txt"))
}

func TestRobust_SkipWorktreeWithoutSparseIndex(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("in/a.txt", "a\n")
	env.Write("out/b.txt", "b\n")
	env.Commit("sparse")
	env.Git("sparse-checkout", "init", "--cone", "--no-sparse-index")
	env.Git("sparse-checkout", "set", "in")
	// A file outside the cone that someone wrote anyway stays the index's.
	env.Write("out/b.txt", "written outside the cone\n")
	env.Write("out/new.txt", "untracked outside the cone\n")
	env.Write("in/a.txt", "a changed\n")
	commit := env.CaptureLikeRecipe(t, "a1")
	require.Equal(t, "b", env.Git("cat-file", "-p", commit+":out/b.txt"))
	rec := env.lastTaken()
	require.Len(t, rec.Repos[0].Skipped, 1)
	require.Equal(t, "out/b.txt", rec.Repos[0].Skipped[0].Path)
	require.Equal(t, "skip_worktree", rec.Repos[0].Skipped[0].Reason)
}

func TestRobust_FsmonitorAndHooksNeverRun(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	markers := filepath.Join(env.Root, "markers")
	listRepo := markerHooks(t, filepath.Join(env.Dir, ".git", "hooks"), markers)
	fsmon := filepath.Join(env.Root, "fsmonitor.sh")
	require.NoError(t, os.WriteFile(fsmon, []byte("#!/bin/sh\ntouch "+filepath.Join(markers, "fsmonitor")+"\nexit 1\n"), 0o755))
	env.Git("config", "core.fsmonitor", fsmon)
	require.Empty(t, listRepo(), "setting up ran a hook")
	env.Write("a.txt", "changed\n")
	env.Write("b.txt", "new\n")
	env.CaptureLikeRecipe(t, "a1")
	env.Write("a.txt", "changed again\n")
	env.CaptureLikeRecipe(t, "a1", "--reason=turn_start")
	env.Write("c.txt", "c\n")
	env.CaptureLikeRecipe(t, "a1", "--reason=turn_end")
	env.Venom("diff", "--agent=a1", "--from=k1", "--json").OK(t)
	env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t)
	require.Empty(t, listRepo(), "a hook or the fsmonitor ran")

	// The same with core.hooksPath naming another folder, and with the
	// config given through leaked GIT_CONFIG_* variables.
	other := filepath.Join(env.Root, "hooks2")
	markerHooks(t, other, markers)
	env.Git("config", "core.hooksPath", other)
	env.Write("a.txt", "third\n")
	env.CaptureLikeRecipe(t, "a1")
	leaky := env.With("GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0="+other,
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1="+fsmon,
		"GIT_CONFIG_PARAMETERS='core.hookspath'='"+other+"'")
	leaky.Write("a.txt", "fourth\n")
	leaky.CaptureLikeRecipe(t, "a1")
	require.Empty(t, listRepo(), "a hook or the fsmonitor ran")
}
