package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blob returns the content of path in agent a1's checkpoint n, read with git,
// and whether the path is there.
func (e *Env) blob(n int, path string) (string, bool) {
	e.t.Helper()
	r := e.GitRaw("cat-file", "-p", "refs/venom/checkpoints/a1/"+itoa(n)+":"+path)
	return r.Stdout, r.Code == 0
}

// entryMode returns the mode git records for path in a1's checkpoint n.
func (e *Env) entryMode(n int, path string) string {
	e.t.Helper()
	out := e.GitRaw("ls-tree", "-z", "refs/venom/checkpoints/a1/"+itoa(n), "--", path).Stdout
	mode, _, _ := strings.Cut(out, " ")
	return mode
}

func itoa(n int) string { return strconv.Itoa(n) }

// captureCase is one row of docs/checkpoints.md#what-a-capture-holds's table: a state, and what plain git must
// then find in the checkpoint besides the recipe's tree.
type captureCase struct {
	name  string
	setup func(env *Env)
	check func(t *testing.T, env *Env, n int)
	// again changes the state once more for a second capture, which goes
	// through the private index the first one left.
	again func(env *Env)
}

// runCaptureCase takes a checkpoint of the case's state, checks it equals the
// recipe's tree and that nothing the user sees changed, then does the same
// for the second state.
func runCaptureCase(t *testing.T, c captureCase) {
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Write("dir/b.txt", "b\n")
	env.Write("run.sh", "#!/bin/sh\n")
	require.NoError(t, os.Symlink("a.txt", env.Path("link")))
	env.Commit("base")
	env.Take(t, "--agent=a1") // k1: the committed state, so the private index exists
	c.setup(env)
	for n := 2; n <= 3; n++ {
		want := env.RecipeTree()
		snap := env.Snapshot()
		res := env.Take(t, "--agent=a1")
		env.AssertUntouched(t, snap)
		require.False(t, res.Reused, "capture %d was deduplicated, but the state changed", n)
		require.Equal(t, "k"+itoa(n), *res.Checkpoint)
		require.Equal(t, want, env.CheckpointTree("a1", n), "capture %d differs from the recipe", n)
		if n == 2 && c.check != nil {
			c.check(t, env, n)
		}
		if c.again == nil {
			return
		}
		c.again(env)
	}
}

func TestCheckpoint_CapturesEveryRowOfTheTable(t *testing.T) {
	t.Parallel()
	cases := []captureCase{
		{name: "tracked file edited, not staged",
			setup: func(env *Env) { env.Write("a.txt", "edited\n") },
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "a.txt")
				assert.Equal(t, "edited\n", got)
			},
			again: func(env *Env) { env.Write("a.txt", "edited twice\n") }},
		{name: "tracked file staged, then edited again",
			setup: func(env *Env) {
				env.Write("a.txt", "staged\n")
				env.Git("add", "a.txt")
				env.Write("a.txt", "working tree\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "a.txt")
				assert.Equal(t, "working tree\n", got, "the working-tree content, not the staged one")
			},
			again: func(env *Env) { env.Write("a.txt", "staged\n") }},
		{name: "tracked file staged only",
			setup: func(env *Env) {
				env.Write("dir/b.txt", "staged\n")
				env.Git("add", "dir/b.txt")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "dir/b.txt")
				assert.Equal(t, "staged\n", got)
			}},
		{name: "untracked files, not ignored",
			setup: func(env *Env) {
				env.Write("new.txt", "new\n")
				env.Write("deep/er/new.txt", "deeper\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "deep/er/new.txt")
				assert.Equal(t, "deeper\n", got)
			},
			again: func(env *Env) { env.Remove("deep") }},
		{name: "deleted files",
			setup: func(env *Env) {
				env.Remove("a.txt")
				env.Git("rm", "-q", "--cached", "dir/b.txt")
			},
			check: func(t *testing.T, env *Env, n int) {
				_, ok := env.blob(n, "a.txt")
				assert.False(t, ok, "a deleted file is absent")
				got, ok := env.blob(n, "dir/b.txt")
				assert.True(t, ok, "a file removed from the index only is untracked, and captured")
				assert.Equal(t, "b\n", got)
			},
			again: func(env *Env) { env.Write("a.txt", "back\n") }},
		{name: "executable bit",
			setup: func(env *Env) {
				require.NoError(env.t, os.Chmod(env.Path("a.txt"), 0o755))
				require.NoError(env.t, os.Chmod(env.Path("run.sh"), 0o644))
			},
			check: func(t *testing.T, env *Env, n int) {
				assert.Equal(t, "100755", env.entryMode(n, "a.txt"))
				assert.Equal(t, "100644", env.entryMode(n, "run.sh"))
			},
			again: func(env *Env) { require.NoError(env.t, os.Chmod(env.Path("a.txt"), 0o644)) }},
		{name: "symlinks",
			setup: func(env *Env) {
				env.Remove("link")
				require.NoError(env.t, os.Symlink("dir/b.txt", env.Path("link")))
				require.NoError(env.t, os.Symlink("nowhere", env.Path("dangling")))
			},
			check: func(t *testing.T, env *Env, n int) {
				assert.Equal(t, "120000", env.entryMode(n, "link"))
				got, _ := env.blob(n, "link")
				assert.Equal(t, "dir/b.txt", got)
				assert.Equal(t, "120000", env.entryMode(n, "dangling"))
			},
			again: func(env *Env) {
				env.Remove("link")
				env.Write("link", "now a file\n")
			}},
		{name: "ignored files never captured",
			setup: func(env *Env) {
				env.Write(".gitignore", "*.log\nbuild/\n")
				env.Write("debug.log", "ignored\n")
				env.Write("build/out.o", "ignored\n")
				env.Write(".git/info/exclude", "*.secret\n")
				env.Write("key.secret", "ignored\n")
				excludes := filepath.Join(env.Home, "excludes")
				require.NoError(env.t, os.WriteFile(excludes, []byte("*.tmp\n"), 0o644))
				env.SetGlobal("core.excludesFile", excludes)
				env.Write("scratch.tmp", "ignored\n")
				env.Write("kept.txt", "kept\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				for _, p := range []string{"debug.log", "build/out.o", "key.secret", "scratch.tmp"} {
					_, ok := env.blob(n, p)
					assert.False(t, ok, "%s is ignored and was captured", p)
				}
				_, ok := env.blob(n, "kept.txt")
				assert.True(t, ok)
			},
			again: func(env *Env) {
				env.Write("debug.log", "still ignored\n")
				env.Write("other.tmp", "ignored\n")
				env.Write("kept.txt", "kept again\n")
			}},
		{name: "tracked file matching an ignore rule",
			setup: func(env *Env) {
				env.Write(".gitignore", "*.txt\n")
				env.Write("a.txt", "tracked, so captured\n")
				env.Write("c.txt", "untracked and ignored\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "a.txt")
				assert.Equal(t, "tracked, so captured\n", got)
				_, ok := env.blob(n, "c.txt")
				assert.False(t, ok)
			}},
		{name: "assume-unchanged edits seen",
			setup: func(env *Env) {
				env.Git("update-index", "--assume-unchanged", "a.txt")
				env.Write("a.txt", "hidden edit\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "a.txt")
				assert.Equal(t, "hidden edit\n", got)
				// The bit stays on in the user's index.
				assert.True(t, strings.HasPrefix(env.Git("ls-files", "-v", "a.txt"), "h "))
			},
			again: func(env *Env) { env.Write("a.txt", "another hidden edit\n") }},
		{name: "file replaced by a folder",
			setup: func(env *Env) {
				env.Remove("a.txt")
				env.Write("a.txt/inside.txt", "inside\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "a.txt/inside.txt")
				assert.Equal(t, "inside\n", got)
			},
			again: func(env *Env) {
				env.Remove("a.txt")
				env.Write("a.txt", "a file again\n")
			}},
		{name: "folder replaced by a file",
			setup: func(env *Env) {
				env.Remove("dir")
				env.Write("dir", "a file now\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				got, _ := env.blob(n, "dir")
				assert.Equal(t, "a file now\n", got)
				_, ok := env.blob(n, "dir/b.txt")
				assert.False(t, ok)
			}},
		{name: "empty folders are not captured",
			setup: func(env *Env) {
				require.NoError(env.t, os.MkdirAll(env.Path("empty/nested"), 0o755))
				env.Write("a.txt", "x\n")
			},
			check: func(t *testing.T, env *Env, n int) {
				_, ok := env.blob(n, "empty")
				assert.False(t, ok)
			}},
		{name: "odd file names",
			setup: func(env *Env) {
				for _, p := range oddNames {
					env.Write(p, "content of "+p+"\n")
				}
			},
			check: func(t *testing.T, env *Env, n int) {
				names := strings.Split(strings.TrimSuffix(env.GitRaw("ls-tree", "-r", "-z", "--name-only",
					"refs/venom/checkpoints/a1/2").Stdout, "\x00"), "\x00")
				for _, p := range oddNames {
					assert.Contains(t, names, p)
				}
			},
			again: func(env *Env) {
				for _, p := range oddNames {
					env.Write(p, "changed "+p+"\n")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runCaptureCase(t, c)
		})
	}
}

// oddNames are file names a capture must carry byte for byte.
var oddNames = []string{
	"with space.txt",
	"new\nline.txt",
	"tab\there.txt",
	"bad\xff\xfebytes.txt",
	"-leading-dash.txt",
	"--json",
	"dir with space/-x/\"quoted\".txt",
	"ünïcödé.txt",
	":(exclude)magic.txt",
	"star*.txt",
	"back\\slash.txt",
}

func TestCheckpoint_UnbornHead(t *testing.T) {
	t.Parallel()
	env := NewBareEnv(t)
	env.Write("a.txt", "first\n")
	env.Write("dir/b.txt", "b\n")
	want := env.RecipeTree()
	snap := env.Snapshot()

	res := env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, "k1", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	// No parent, and HEAD stays unborn.
	require.Equal(t, "", env.Git("log", "--format=%P", "-1", "refs/venom/checkpoints/a1/1"))
	require.NotEqual(t, 0, env.GitRaw("rev-parse", "-q", "--verify", "HEAD").Code, "HEAD was born")
	require.Equal(t, "refs/heads/main", env.Git("symbolic-ref", "HEAD"))
	it := env.Item(t, "a1", "k1")
	require.Nil(t, it.Repos[0].Head, "head is null on an unborn HEAD")
	require.NotNil(t, it.Repos[0].Branch)
	require.Equal(t, "main", *it.Repos[0].Branch)

	// With an index but still no commit.
	env.Git("add", "a.txt")
	env.Write("a.txt", "edited after add\n")
	want = env.RecipeTree()
	snap = env.Snapshot()
	res = env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, "k2", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	require.Equal(t, "", env.Git("log", "--format=%P", "-1", "refs/venom/checkpoints/a1/2"))
}

// In a repository with no commit yet, the plan says so in words, not
// "stays at no commit"; an agent with no harness has no conversation for
// a checkpoint to bring back (conversation false in list --json).
func TestRollback_UnbornHeadPlanSaysNoCommitsYet(t *testing.T) {
	t.Parallel()
	env := NewBareEnv(t)
	env.Write("a.txt", "first\n")
	env.Take(t, "--agent=a1")
	env.Write("b.txt", "later\n")
	out := env.Venom("rollback", "k1", "--dry-run").OK(t).Stdout
	require.Contains(t, out, "HEAD: stays on main, which has no commits yet.\n")
	require.NotContains(t, out, "no commit.")
	require.False(t, env.Item(t, "a1", "k1").Conversation)
	require.NotEqual(t, 0, env.GitRaw("rev-parse", "-q", "--verify", "HEAD").Code, "HEAD was born")
}

func TestCheckpoint_DetachedHead(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	head := env.CommitID("second")
	env.Git("checkout", "-q", "--detach")
	env.Write("a.txt", "detached edit\n")
	want := env.RecipeTree()
	snap := env.Snapshot()

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	require.Equal(t, head, env.Git("rev-parse", "refs/venom/checkpoints/a1/1^"))
	r := env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t)
	require.NotContains(t, r.Stdout, `"branch"`, "branch is absent when HEAD is detached")
	it := env.Item(t, "a1", "k1")
	require.Equal(t, head, *it.Repos[0].Head)
}

func TestCheckpoint_NonUTF8PathsInJSON(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "10")
	raw := "big\xff\xfe.bin"
	env.Write(raw, strings.Repeat("x", 50))
	env.Write("-big.bin", strings.Repeat("y", 40))
	env.Take(t, "--agent=a1")
	r := env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t)
	var l ListResult
	r.JSON(t, &l)
	sk := l.Checkpoints[0].Repos[0].Skipped
	require.Len(t, sk, 2, r.Stdout)
	// docs/json.md#conventions: invalid bytes become U+FFFD in path, the exact bytes go in path_b64.
	assert.Equal(t, SkippedPath{Path: "-big.bin", Bytes: 40, Reason: "too_big"}, sk[0])
	assert.Equal(t, SkippedPath{Path: "big\uFFFD\uFFFD.bin", PathB64: "Ymln//4uYmlu", Bytes: 50, Reason: "too_big"}, sk[1])
	// The skipped file keeps the index's version, which here is none.
	_, ok := env.blob(1, raw)
	assert.False(t, ok)
}

func TestCheckpoint_SkipsFilesOverMaxFileBytes(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("big.bin", "small at first\n")
	env.Commit("big")
	env.SetGlobal("venom.maxFileBytes", "100")
	env.Write("big.bin", strings.Repeat("b", 101))  // changed, too big
	env.Write("new.bin", strings.Repeat("n", 200))  // new, too big
	env.Write("edge.bin", strings.Repeat("e", 100)) // exactly the limit: captured
	env.Write("small.txt", "small\n")
	want := env.RecipeTree("big.bin", "new.bin")
	snap := env.Snapshot()

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	got, _ := env.blob(1, "big.bin")
	require.Equal(t, "small at first\n", got, "the index's version is kept")
	_, ok := env.blob(1, "new.bin")
	require.False(t, ok)
	_, ok = env.blob(1, "edge.bin")
	require.True(t, ok)
	it := env.Item(t, "a1", "k1")
	require.Equal(t, []SkippedPath{
		{Path: "big.bin", Bytes: 101, Reason: "too_big"},
		{Path: "new.bin", Bytes: 200, Reason: "too_big"},
	}, it.Repos[0].Skipped)
	taken := env.Records("checkpoint.taken")
	require.Len(t, taken, 1)
	require.Len(t, taken[0]["repos"].([]any)[0].(map[string]any)["skipped"], 2, "the log record lists them too")

	// Raising the limit captures them, even when nothing else changed and the
	// files are old enough for the last scan to be remembered.
	time.Sleep(2100 * time.Millisecond)
	env.Take(t, "--agent=a1") // reused: same state, same limit
	env.SetGlobal("venom.maxFileBytes", "1000")
	want = env.RecipeTree()
	res := env.Take(t, "--agent=a1")
	require.False(t, res.Reused, "the limit changed what is captured")
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	require.Empty(t, env.Item(t, "a1", "k2").Repos[0].Skipped)

	// And lowering it again skips them again.
	time.Sleep(2100 * time.Millisecond)
	env.Take(t, "--agent=a1")
	env.SetGlobal("venom.maxFileBytes", "150")
	want = env.RecipeTree("new.bin")
	res = env.Take(t, "--agent=a1")
	require.Equal(t, "k3", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 3))
}

func TestCheckpoint_SkipWorktreeListedAsSkipped(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("sparse.txt", "committed\n")
	env.Write("other.txt", "o\n")
	env.Commit("two files")
	env.Git("update-index", "--skip-worktree", "sparse.txt")
	env.Write("sparse.txt", "local change git does not see\n")
	env.Write("other.txt", "edited\n")
	snap := env.Snapshot()

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	got, _ := env.blob(1, "sparse.txt")
	require.Equal(t, "committed\n", got, "the index's content is kept")
	got, _ = env.blob(1, "other.txt")
	require.Equal(t, "edited\n", got)
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 1))
	sk := env.Item(t, "a1", "k1").Repos[0].Skipped
	require.Len(t, sk, 1)
	require.Equal(t, "sparse.txt", sk[0].Path)
	require.Equal(t, "skip_worktree", sk[0].Reason)

	// A skip-worktree path whose file is absent, as in a sparse checkout.
	env.Remove("sparse.txt")
	env.Write("other.txt", "again\n")
	env.Take(t, "--agent=a1")
	got, _ = env.blob(2, "sparse.txt")
	require.Equal(t, "committed\n", got)
	sk = env.Item(t, "a1", "k2").Repos[0].Skipped
	require.Equal(t, []SkippedPath{{Path: "sparse.txt", Bytes: int64(len("committed\n")), Reason: "skip_worktree"}}, sk,
		"docs/checkpoints.md#what-a-capture-holds: the index entry's size when there is no working file")
}

func TestCheckpoint_CleanFilterGivesWhatTheFilterGives(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "filter.upper.clean", "tr a-z A-Z")
	env.Git("config", "filter.upper.smudge", "cat")
	env.Write(".gitattributes", "*.up filter=upper\n")
	env.Write("x.up", "hello\n")
	env.Commit("filtered")
	require.Equal(t, "HELLO\n", env.Git("cat-file", "-p", "HEAD:x.up")+"\n")
	env.Write("x.up", "hello\nworld\n")
	env.Write("y.up", "new file\n")
	env.Write("plain.txt", "not filtered\n")
	want := env.RecipeTree()
	snap := env.Snapshot()

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	got, _ := env.blob(1, "x.up")
	require.Equal(t, "HELLO\nWORLD\n", got)
	got, _ = env.blob(1, "y.up")
	require.Equal(t, "NEW FILE\n", got)
	got, _ = env.blob(1, "plain.txt")
	require.Equal(t, "not filtered\n", got)
}

func TestCheckpoint_GitLFSPointers(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	if env.GitRaw("lfs", "version").Code != 0 {
		t.Skip("git-lfs is not installed")
	}
	env.Git("lfs", "install", "--local")
	env.Git("lfs", "track", "*.bin")
	env.Write("model.bin", strings.Repeat("weights ", 100))
	env.Commit("lfs")
	env.Write("model.bin", strings.Repeat("changed ", 100))
	env.Write("new.bin", "a new large file\n")
	want := env.RecipeTree()
	snap := env.Snapshot()

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	for _, p := range []string{"model.bin", "new.bin"} {
		got, _ := env.blob(1, p)
		require.True(t, strings.HasPrefix(got, "version https://git-lfs.github.com/spec/v1\n"), "%s: %q", p, got)
	}
}

// TestCheckpoint_SettledFilesWhenSettingsChange lets the files age past the
// point where a capture may remember its last scan, then changes only what
// lies outside the tree: config, attributes and ignore rules. Every capture
// must still equal the recipe's tree.
func TestCheckpoint_SettledFilesWhenSettingsChange(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	excludes := filepath.Join(env.Home, "excludes")
	require.NoError(t, os.WriteFile(excludes, nil, 0o644))
	env.SetGlobal("core.excludesFile", excludes)
	env.Write("x.up", "lower case\n")
	env.Write("notes.txt", "notes\n")
	env.Write("build.out", "output\n")
	time.Sleep(2100 * time.Millisecond)
	n := 0
	capture := func(what string) {
		t.Helper()
		want := env.RecipeTree()
		res := env.Take(t, "--agent=a1")
		if !res.Reused {
			n++
		}
		require.Equal(t, want, env.CheckpointTree("a1", n), "after %s", what)
		// Once more: a capture that may reuse the last scan.
		res = env.Take(t, "--agent=a1")
		require.True(t, res.Reused, "after %s", what)
	}
	capture("the first capture")
	env.Write(".git/info/attributes", "*.up filter=upper\n")
	env.Git("config", "filter.upper.clean", "tr a-z A-Z")
	capture("a clean filter configured in the repository")
	env.Git("config", "filter.upper.clean", "tr a-z _")
	capture("the filter changed")
	env.Write(".git/info/attributes", "")
	capture("the attributes changed")
	require.NoError(t, os.WriteFile(excludes, []byte("*.out\n"), 0o644))
	capture("core.excludesFile's content changed")
	env.Write(".git/info/exclude", "notes.txt\n")
	capture("info/exclude changed")
	_, ok := env.blob(n, "notes.txt")
	require.False(t, ok)
	_, ok = env.blob(n, "build.out")
	require.False(t, ok)
}

// TestCheckpoint_EmptyExcludesFileReadsNoGlobalIgnore: core.excludesFile
// set to "" leaves git with no global ignore file (not even the XDG
// default), so git shows x.log as untracked and every capture holds it.
func TestCheckpoint_EmptyExcludesFileReadsNoGlobalIgnore(t *testing.T) {
	t.Parallel()
	for _, set := range []bool{true, false} {
		t.Run(fmt.Sprintf("set=%v", set), func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			xdg := filepath.Join(env.Home, ".config", "git", "ignore")
			require.NoError(t, os.MkdirAll(filepath.Dir(xdg), 0o755))
			require.NoError(t, os.WriteFile(xdg, []byte("*.log\n"), 0o644))
			if set {
				env.SetGlobal("core.excludesFile", "")
			}
			env.Write("notes.txt", "notes\n")
			env.Take(t, "--agent=a1") // the scan remembered from here on
			for i := 2; i <= 4; i++ {
				log := fmt.Sprintf("x%d.log", i)
				env.Write(log, "log\n")
				env.Write(fmt.Sprintf("n%d.txt", i), "new\n") // never reused
				want := env.RecipeTree()
				env.Take(t, "--agent=a1")
				require.Equal(t, want, env.CheckpointTree("a1", i), "capture %d", i)
				_, ok := env.blob(i, log)
				require.Equal(t, set, ok, "capture %d holds %s as git status shows it", i, log)
				time.Sleep(1100 * time.Millisecond) // settled for the next
			}
		})
	}
}
