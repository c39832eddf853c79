package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckpoint_CommitShape(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// Signing is the user's choice for their commits, never for ours: a
	// capture must not even try (docs/checkpoints.md#how-a-capture-runs step 5).
	env.SetGlobal("commit.gpgsign", "true")
	env.SetGlobal("gpg.program", "false")
	env.SetGlobal("user.useConfigOnly", "true")
	head := env.Git("rev-parse", "HEAD")
	env.Write("a.txt", "x\n")
	env.Take(t, "--agent=a1", "--reason=turn_start")
	env.Write("a.txt", "y\n")
	env.Take(t, "--agent=a1", "--reason=turn_end", "--label=not in the commit")

	cases := []struct {
		n   int
		msg string
	}{
		{1, "venom checkpoint a1/k1\n\nVenom-Agent: a1\nVenom-Checkpoint: k1\nVenom-Reason: turn_start\nVenom-Turn: t1\n"},
		{2, "venom checkpoint a1/k2\n\nVenom-Agent: a1\nVenom-Checkpoint: k2\nVenom-Reason: turn_end\nVenom-Turn: t1\n"},
	}
	for _, c := range cases {
		ref := "refs/venom/checkpoints/a1/" + itoa(c.n)
		assert.Equal(t, c.msg, env.GitRaw("log", "-1", "--format=%B", ref).Stdout[:len(c.msg)])
		assert.Equal(t, "venom <venom@localhost>|venom <venom@localhost>", env.Git("log", "-1", "--format=%an <%ae>|%cn <%ce>", ref))
		assert.Equal(t, head, env.Git("log", "-1", "--format=%P", ref), "the parent is HEAD")
		assert.NotContains(t, env.Git("cat-file", "commit", ref), "gpgsig", "the checkpoint commit is signed")
	}
	// A manual checkpoint with no open turn has no Venom-Turn trailer.
	env.Write("a.txt", "z\n")
	env.Take(t, "--agent=a1")
	assert.Equal(t, "venom checkpoint a1/k3\n\nVenom-Agent: a1\nVenom-Checkpoint: k3\nVenom-Reason: manual\n",
		strings.TrimRight(env.GitRaw("log", "-1", "--format=%B", "refs/venom/checkpoints/a1/3").Stdout, "\n")+"\n")
	// git keeps no reflog for refs/venom (docs/checkpoints.md#refs), and no branch moved.
	_, err := os.Stat(filepath.Join(env.Dir, ".git", "logs", "refs", "venom"))
	assert.True(t, os.IsNotExist(err), "a reflog was written for refs/venom")
	assert.Equal(t, head, env.Git("rev-parse", "main"))
}

func TestCheckpoint_TakenRecordShape(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	env.Take(t, "--agent=a1", "--reason=turn_start")
	b, err := os.ReadFile(filepath.Join(env.StateDir(), "log.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	types := env.LogTypes()
	require.Equal(t, []string{"agent.registered", "turn.started", "checkpoint.taken"}, types)
	taken := lines[2]
	// docs/checkpoints.md#the-log's record, in its member order, after seq and ts.
	require.Equal(t, []string{"seq", "ts", "type", "agent", "checkpoint", "reason", "turn", "through_turn", "at",
		"mid_turn", "overlap", "repos"}, Keys(t, taken))
	rec := env.Records("checkpoint.taken")[0]
	repos := rec["repos"].([]any)
	require.Len(t, repos, 1)
	repo := repos[0].(map[string]any)
	reposRaw := taken[strings.Index(taken, `"repos":[`)+len(`"repos":[`):]
	require.Equal(t, []string{"repo", "path", "commit", "head", "branch", "skipped", "submodules"},
		Keys(t, reposRaw[:strings.LastIndex(reposRaw, "]")]))
	assert.Equal(t, ".", repo["repo"])
	assert.Equal(t, env.Dir, repo["path"])
	assert.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a1/1"), repo["commit"], "the record names the ref's commit")
	assert.Equal(t, env.Git("rev-parse", "HEAD"), repo["head"])
	assert.Equal(t, "main", repo["branch"])
	assert.Equal(t, []any{}, repo["skipped"])
	assert.Equal(t, []any{}, repo["submodules"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, rec["at"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, rec["ts"])
}

func TestCheckpoint_LinkedWorktree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	wt := filepath.Join(env.Root, "wt")
	env.Git("worktree", "add", "-q", "-b", "feature", wt)
	w := env.At(wt) // the linked worktree, in the test's world
	w.Write("feature.txt", "agent's work\n")
	w.Write("README.md", "edited in the worktree\n")
	env.Write("README.md", "edited in the main worktree\n")
	want := w.RecipeTree()
	mainSnap := env.Snapshot()
	wtSnap := w.Snapshot()

	res := w.Take(t, "--agent=w1", "--isolation=worktree")
	require.Equal(t, "k1", *res.Checkpoint)
	env.AssertUntouched(t, mainSnap)
	w.AssertUntouched(t, wtSnap)

	// The ref is in the common repository: the main worktree sees it.
	require.Equal(t, want, env.refTree("refs/venom/checkpoints/w1/1"))
	require.Equal(t, w.Git("rev-parse", "HEAD"), env.Git("rev-parse", "refs/venom/checkpoints/w1/1^"))
	// The state is the common directory's.
	common := env.CommonDir()
	require.FileExists(t, filepath.Join(common, "venom", "log.jsonl"))
	require.NoDirExists(t, filepath.Join(common, "worktrees", "wt", "venom"))
	it := w.Item(t, "w1", "k1")
	require.Equal(t, wt, it.Repos[0].Path)
	require.Equal(t, "feature", *it.Repos[0].Branch)

	// From the main worktree, the agent's capture is refused: a command
	// acts on the worktree it runs in, and w1's is the linked one. With
	// git -C, as the refusal says, it captures its own tree.
	w.Write("feature.txt", "more work\n")
	want = w.RecipeTree()
	r := env.Venom("checkpoint", "--agent=w1", "--json").Fails(t, 2, "invalid_params.agent")
	assert.JSONEq(t, `{"agent":"w1","tree":"`+wt+`"}`, string(ErrorOf(t, r).Error.Data))
	r = env.Venom("checkpoint", "--agent=w1")
	assert.Contains(t, r.Stderr, "hint: its worktree:\nhint:   "+wt+"\nhint: run the command there (git -C <that path> ...)")
	r = env.run(env.Root, nil, "git", "-C", wt, "venom-checkpoint", "--agent=w1", "--json").OK(t)
	var res2 TakeResult
	r.JSON(t, &res2)
	require.Equal(t, "k2", *res2.Checkpoint)
	require.Equal(t, want, env.refTree("refs/venom/checkpoints/w1/2"))
	r = env.run(env.Root, nil, "git", "-C", wt, "venom-checkpoint", "list", "--agent=w1", "--json").OK(t)
	var l ListResult
	r.JSON(t, &l)
	require.Len(t, l.Checkpoints, 2)

	// An agent of the main worktree captures the main worktree.
	want = env.RecipeTree()
	env.Take(t, "--agent=m1")
	require.Equal(t, want, env.CheckpointTree("m1", 1))
	require.Equal(t, "edited in the main worktree\n", env.Git("show", "refs/venom/checkpoints/m1/1:README.md")+"\n")
}

func TestCheckpoint_TouchesNothingTheUserSees(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Write("b.txt", "b\n")
	env.Write("sparse.txt", "s\n")
	env.Commit("files")
	env.Git("tag", "v1")
	env.Git("branch", "other")
	env.Write("a.txt", "stashed\n")
	env.Git("stash", "-q")
	env.Write("a.txt", "staged\n")
	env.Git("add", "a.txt")
	env.Write("a.txt", "unstaged\n")
	env.Write("new.txt", "untracked\n")
	env.Remove("b.txt")
	env.Git("update-index", "--assume-unchanged", "b.txt")
	env.Git("update-index", "--skip-worktree", "sparse.txt")
	env.Write(".gitignore", "*.log\n")
	env.Write("x.log", "ignored\n")
	markers := env.MarkerHooks(filepath.Join(env.Dir, ".git"))
	// An fsmonitor is a program too (docs/checkpoints.md#how-a-capture-runs): it must not run either.
	fsmon := filepath.Join(env.Root, "fsmonitor.sh")
	require.NoError(t, os.WriteFile(fsmon, []byte("#!/bin/sh\ntouch '"+filepath.Join(markers, "fsmonitor")+"'\nexit 1\n"), 0o755))
	env.Git("config", "core.fsmonitor", fsmon)
	idx := filepath.Join(env.Dir, ".git", "index")
	before, err := os.Stat(idx)
	require.NoError(t, err)
	want := env.RecipeTree()
	// The recipe itself runs with the pins, so no marker yet.
	require.Empty(t, Markers(markers))
	snap := env.Snapshot()

	for i := 0; i < 3; i++ {
		env.Take(t, "--agent=a1")
		env.Venom("checkpoint", "list", "--agent=a1").OK(t)
	}
	env.Take(t, "--agent=a1", "--reason=turn_start")
	env.Take(t, "--agent=a1", "--reason=turn_end")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	after, err := os.Stat(idx)
	require.NoError(t, err)
	assert.Equal(t, before.ModTime(), after.ModTime(), "the index file was rewritten")
	assert.Equal(t, before.Sys().(*syscall.Stat_t).Ino, after.Sys().(*syscall.Stat_t).Ino, "the index file was replaced")
	assert.Empty(t, Markers(markers), "a hook or the fsmonitor ran")
	assert.Equal(t, "h b.txt", env.Git("ls-files", "-v", "b.txt"), "assume-unchanged is kept in the user's index")
	assert.Equal(t, "S sparse.txt", env.Git("ls-files", "-v", "sparse.txt"))
	assert.Equal(t, "1", env.Git("rev-list", "--count", "--walk-reflogs", "refs/stash"))
}

func TestCheckpoint_HooksNeverRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(env *Env) string
	}{
		{"hooks in .git/hooks", func(env *Env) string {
			return env.MarkerHooks(filepath.Join(env.Dir, ".git"))
		}},
		{"core.hooksPath in the repository's config", func(env *Env) string {
			dir := filepath.Join(env.Root, "custom")
			m := env.MarkerHooks(dir)
			env.Git("config", "core.hooksPath", filepath.Join(dir, "hooks"))
			return m
		}},
		{"core.hooksPath in the global config", func(env *Env) string {
			dir := filepath.Join(env.Root, "global")
			m := env.MarkerHooks(dir)
			env.SetGlobal("core.hooksPath", filepath.Join(dir, "hooks"))
			return m
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			markers := c.setup(env)
			env.Write("a.txt", "x\n")
			snap := env.Snapshot()
			env.Take(t, "--agent=a1", "--reason=turn_start") // a new ref: reference-transaction would fire
			env.Take(t, "--agent=a1", "--reason=turn_end")   // reused
			env.Take(t, "--agent=a1", "--label=l")           // reused, labelled
			env.Venom("checkpoint", "list", "--agent=a1").OK(t)
			env.AssertUntouched(t, snap)
			require.Len(t, env.VenomRefs(), 1)
			require.Empty(t, Markers(markers), "a hook ran during a capture")
		})
	}
}

func TestCheckpoint_IndexLockLeftAlone(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	env.Write("new.txt", "new\n")
	lock := filepath.Join(env.Dir, ".git", "index.lock")
	require.NoError(t, os.WriteFile(lock, []byte("someone else's half-written index"), 0o644))
	want := env.RecipeTree()
	snap := env.Snapshot()
	require.NotEqual(t, "absent", snap.IndexLck)

	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 1))
	// Again, through the private index the first capture left.
	env.Write("a.txt", "y\n")
	want = env.RecipeTree()
	snap = env.Snapshot()
	env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	b, err := os.ReadFile(lock)
	require.NoError(t, err)
	require.Equal(t, "someone else's half-written index", string(b))
}
