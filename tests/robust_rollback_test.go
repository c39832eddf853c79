package tests

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Rollback: exactly right or a clean refusal, across repository
// features, layouts, file types and faults.

// agentTurn registers a1 with its own worktree (unguarded), takes k1, runs
// work as the agent's turn and takes k2.
func agentTurn(t *testing.T, env *Env, work func()) {
	t.Helper()
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	work()
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
}

// rollbackExactly rolls back and checks with plain git that the files are
// the target's (docs/checkpoints.md#how-a-capture-runs's recipe gives its tree again), that the safety
// checkpoint holds what was there before, and that the result says exact.
func rollbackExactly(t *testing.T, env *Env, target string, args ...string) RollbackResult {
	t.Helper()
	s := env.RecipeTree()
	res := env.Rollback(append([]string{"--agent=a1", "--checkpoint=" + target}, args...)...)
	require.NotNil(t, res.Exact)
	require.True(t, *res.Exact, "the rollback was not exact")
	require.Equal(t, env.CheckpointTreeOf("a1", target), env.RecipeTree(), "the files are not the target's")
	require.Equal(t, s, env.CheckpointTreeOf("a1", res.Safety), "the safety checkpoint is not S")
	return res
}

func TestRobust_RollbackRunsSmudgeFilters(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	lfs := true
	if _, err := exec.LookPath("git-lfs"); err != nil {
		lfs = false
		t.Log("git-lfs is not installed: the LFS part is skipped")
	}
	attrs := "*.up filter=up -text\n*.crlf text eol=crlf\n*.id ident -text\n"
	if lfs {
		env.Git("lfs", "install", "--local")
		attrs += "*.bin filter=lfs diff=lfs merge=lfs -text\n"
	}
	env.Git("config", "filter.up.clean", "tr a-z A-Z")
	env.Git("config", "filter.up.smudge", "tr A-Z a-z")
	env.Git("config", "core.autocrlf", "true")
	env.Write(".gitattributes", attrs)
	originals := map[string]string{
		"a.up":    "lower case\n",
		"b.crlf":  "one\r\ntwo\r\n",
		"c.id":    "$Id$\n",
		"d.txt":   "autocrlf\r\nline\r\n",
		"big.bin": strings.Repeat("real lfs content\x00", 64),
	}
	for p, c := range originals {
		env.Write(p, c)
	}
	env.Commit("filtered")
	agentTurn(t, env, func() {
		env.Write("a.up", "changed\n")
		env.Write("b.crlf", "changed\r\n")
		env.Write("c.id", "$Id$\nchanged\n")
		env.Write("d.txt", "changed\r\n")
		env.Write("big.bin", "changed lfs content")
		env.Remove("a.up")
		env.Write("new.up", "new\n")
	})
	markers := filepath.Join(env.Root, "markers")
	hooks := markerHooks(t, env.Path(".git/hooks"), markers)
	rollbackExactly(t, env, "k1", "--restore=files")
	for _, p := range []string{"a.up", "b.crlf", "d.txt", "big.bin"} {
		require.Equal(t, originals[p], env.Read(p), "%s is not its smudged content", p)
	}
	require.Regexp(t, `^\$Id: [0-9a-f]{40} \$\n$`, env.Read("c.id"), "ident is expanded on the way out")
	_, err := os.Stat(env.Path("new.up"))
	require.True(t, os.IsNotExist(err))
	require.Empty(t, hooks(), "a hook ran during the rollback")
	// Going forward again brings the changes back through the same filters.
	rollbackExactly(t, env, "k2", "--restore=files")
	require.Equal(t, "changed lfs content", env.Read("big.bin"))
}

func TestRobust_RollbackNeverRunsHooksOrFsmonitorAndMovesHead(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	agentTurn(t, env, func() {
		env.Write("a.txt", "agent\n")
		env.Write("b.txt", "b\n")
		env.Commit("the agent's commit")
		env.Write("c.txt", "c\n")
	})
	markers := filepath.Join(env.Root, "markers")
	hooks := markerHooks(t, env.Path(".git/hooks"), markers)
	fsmon := filepath.Join(env.Root, "fsmonitor.sh")
	require.NoError(t, os.WriteFile(fsmon, []byte("#!/bin/sh\ntouch "+filepath.Join(markers, "fsmonitor")+"\nexit 1\n"), 0o755))
	env.Git("config", "core.fsmonitor", fsmon)
	base := env.Git("rev-parse", "HEAD~1")
	res := rollbackExactly(t, env, "k1", "--restore=files")
	require.True(t, res.Repos[0].Head.Moves)
	require.Equal(t, base, env.Git("rev-parse", "HEAD"))
	require.Empty(t, hooks(), "a hook or the fsmonitor ran during the rollback")
}

func TestRobust_RollbackAndIndexLock(t *testing.T) {
	t.Parallel()
	t.Run("unguarded, HEAD moves: refused, lock kept", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t)
		agentTurn(t, env, func() {
			env.Write("a.txt", "agent\n")
			env.Commit("the agent's commit")
		})
		plan := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files").Plan
		lock := env.Path(".git/index.lock")
		require.NoError(t, os.WriteFile(lock, []byte("held"), 0o644))
		snap := env.Snapshot()
		r := env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json")
		r.Fails(t, 5, "conflict.git_operation")
		require.Contains(t, r.Stdout, `"operation":"index_locked"`)
		env.AssertUntouched(t, snap)
		require.Empty(t, env.Records("rollback.started"))
		// --keep-head needs no index: it works, and the lock stays.
		res := env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files", "--keep-head")
		require.True(t, *res.Exact)
		b, err := os.ReadFile(lock)
		require.NoError(t, err)
		require.Equal(t, "held", string(b))
	})
	t.Run("guarded: works, lock kept", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t)
		env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
		env.Write("a.txt", "agent\n")
		env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
		lock := env.Path(".git/index.lock")
		require.NoError(t, os.WriteFile(lock, []byte("held"), 0o644))
		snap := env.Snapshot()
		res := env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files")
		require.True(t, *res.Exact)
		after := env.Snapshot()
		require.Equal(t, snap.Index, after.Index)
		require.Equal(t, snap.IndexLck, after.IndexLck)
		require.Equal(t, snap.Refs, after.Refs)
	})
}

// TestRobust_PersonCommitsDuringAGuardedRollback: a person's git commit and
// git checkout -b race a rollback of a guarded tree; the person's commit,
// branch and index are theirs afterwards.
func TestRobust_PersonCommitsDuringAGuardedRollback(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("person.txt", "v0\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	for i := 0; i < 40; i++ {
		env.Write(fmt.Sprintf("agent/f%02d.txt", i), "agent\n")
	}
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	plan := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=keep").Plan
	var wg sync.WaitGroup
	var r Result
	wg.Add(1)
	go func() {
		defer wg.Done()
		r = env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=keep", "--plan="+plan, "--json")
	}()
	env.Write("person.txt", "the person's edit\n")
	commit := env.GitRaw("commit", "-q", "-m", "person", "--", "person.txt")
	branch := env.GitRaw("checkout", "-q", "-b", "person-branch")
	wg.Wait()
	require.Equal(t, 0, commit.Code, commit.Stderr)
	require.Equal(t, 0, branch.Code, branch.Stderr)
	// The rollback ran, or refused because the tree changed under its plan.
	if r.Code != 0 {
		r.Fails(t, 5, "conflict.rollback_stale")
	}
	require.Equal(t, "ref: refs/heads/person-branch", strings.TrimSpace(env.Read(".git/HEAD")))
	require.Equal(t, "person", env.Git("log", "-1", "--format=%s", "person-branch"))
	require.Equal(t, "the person's edit\n", env.Git("show", "person-branch:person.txt")+"\n")
	require.Equal(t, "the person's edit\n", env.Read("person.txt"))
	require.Empty(t, env.Git("status", "--porcelain", "--untracked-files=no"), "the person's index was written")
}

func TestRobust_RollbackInASparseCheckout(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("in/a.txt", "a\n")
	env.Write("out/b.txt", "b\n")
	env.Commit("sparse")
	env.Git("sparse-checkout", "init", "--cone", "--sparse-index")
	env.Git("sparse-checkout", "set", "in")
	agentTurn(t, env, func() {
		env.Write("in/a.txt", "agent\n")
		env.Write("in/new.txt", "new\n")
	})
	res := rollbackExactly(t, env, "k1", "--restore=files")
	require.Equal(t, "a\n", env.Read("in/a.txt"))
	require.Equal(t, "skip_worktree", res.LeftReasons()["out/"], "%+v", res.Repos[0].Left)
	_, err := os.Stat(env.Path("out"))
	require.True(t, os.IsNotExist(err), "a rollback never touches paths outside the cone")
}

func TestRobust_RollbackNeverFollowsSymlinks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := filepath.Join(env.Root, "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside\n"), 0o644))
	outDir := filepath.Join(env.Root, "outside-dir")
	require.NoError(t, os.MkdirAll(outDir, 0o755))
	env.Write("plain.txt", "plain\n")
	env.Write("d/file.txt", "in d\n")
	require.NoError(t, os.Symlink(outside, env.Path("link")))
	env.Commit("base")
	agentTurn(t, env, func() {
		// plain.txt becomes a link out; the link becomes a file; d becomes
		// a link to a folder outside.
		env.Remove("plain.txt")
		require.NoError(t, os.Symlink(outside, env.Path("plain.txt")))
		env.Remove("link")
		env.Write("link", "now a file\n")
		env.Remove("d")
		require.NoError(t, os.Symlink(outDir, env.Path("d")))
	})
	rollbackExactly(t, env, "k1", "--restore=files")
	b, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "outside\n", string(b), "the rollback wrote through a link")
	ents, _ := os.ReadDir(outDir)
	require.Empty(t, ents, "the rollback wrote into a linked folder")
	target, err := os.Readlink(env.Path("link"))
	require.NoError(t, err)
	require.Equal(t, outside, target)
	require.Equal(t, "plain\n", env.Read("plain.txt"))
	require.Equal(t, "in d\n", env.Read("d/file.txt"))
}

func TestRobust_RollbackKeepsEmptyFoldersAndSpecialFiles(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("d/keep.txt", "keep\n")
	env.Commit("base")
	require.NoError(t, os.MkdirAll(env.Path("empty/nested"), 0o755))
	require.NoError(t, os.MkdirAll(env.Path("d/empty"), 0o755))
	specialFiles(t, env.Dir)
	agentTurn(t, env, func() {
		env.Write("d/new.txt", "new\n")
		env.Write("gen/deep/out.txt", "generated\n")
		env.Remove("d/keep.txt")
	})
	// A FIFO where the target has a file is in the way: left, never opened.
	env.Write("d/fifo-here", "x\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	env.Remove("d/fifo-here")
	require.NoError(t, syscall.Mkfifo(env.Path("d/fifo-here"), 0o644))
	done := make(chan RollbackResult, 1)
	go func() { done <- env.Rollback("--agent=a1", "--checkpoint=k2", "--restore=files") }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a rollback hung on a special file")
	}
	res := env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files")
	require.True(t, *res.Exact)
	for _, d := range []string{"empty/nested", "d/empty"} {
		fi, err := os.Stat(env.Path(d))
		require.NoError(t, err, "%s was removed", d)
		require.True(t, fi.IsDir())
	}
	for _, p := range []string{"fifo", "sock"} {
		_, err := os.Lstat(env.Path(p))
		require.NoError(t, err, "%s was removed", p)
	}
	_, err := os.Stat(env.Path("gen"))
	require.True(t, os.IsNotExist(err), "the folders the turn made go with its files")
	require.Equal(t, "keep\n", env.Read("d/keep.txt"))
}

func TestRobust_RollbackLeavesAnUnreadableFile(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("secret.txt", "v1\n")
	env.Write("other.txt", "v1\n")
	env.Commit("base")
	nobody := asNobody(t, env)
	run := func(args ...string) Result { return nobody(append([]string{"venom-checkpoint"}, args...)...) }
	run("--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("secret.txt", "v2, unreadable\n")
	env.Write("other.txt", "v2\n")
	require.NoError(t, os.Chmod(env.Path("secret.txt"), 0))
	run("--agent=a1", "--reason=turn_end", "--json").OK(t)
	var dry RollbackResult
	nobody("venom-rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--dry-run", "--json").OK(t).JSON(t, &dry)
	require.Equal(t, "unreadable", dry.LeftReasons()["secret.txt"], "%+v", dry.Repos[0].Left)
	var res RollbackResult
	nobody("venom-rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--plan="+dry.Plan, "--json").
		OK(t).JSON(t, &res)
	require.Equal(t, "v1\n", env.Read("other.txt"))
	require.Equal(t, "v2, unreadable\n", env.Read("secret.txt"), "an unreadable file is never touched")
}

func TestRobust_RollbackRefusesLeakedRepositoryVariables(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	agentTurn(t, env, func() { env.Write("a.txt", "agent\n") })
	other := filepath.Join(env.Root, "other")
	env.Git("init", "-q", other)
	snap := env.Snapshot()
	for _, v := range []string{"GIT_DIR=" + filepath.Join(other, ".git"), "GIT_WORK_TREE=" + other,
		"GIT_INDEX_FILE=" + filepath.Join(other, ".git", "index"), "GIT_OBJECT_DIRECTORY=" + filepath.Join(other, ".git", "objects")} {
		env.VenomIn(env.Dir, []string{v}, "rollback", "--agent=a1", "--checkpoint=k1", "--restore=files",
			"--dry-run", "--json").Fails(t, 10, "unsupported.environment")
	}
	env.AssertUntouched(t, snap)
}

// TestRobust_RollbackWriteFaults fails each write of the safety checkpoint
// and of the rollback capture. Before rollback.started nothing changes;
// after it the files are undone (docs/rollback.md#failures).
func TestRobust_RollbackWriteFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		point, code string
		started     bool
	}{
		// The safety checkpoint: nothing written yet.
		{"commit-write", "failed.checkpoint_git", false},
		{"ref-create", "failed.checkpoint_git", false},
		{"log-append", "failed.state", false},
		{"log-fsync", "failed.state", false},
		// The rollback capture, after the files moved: undone.
		{"capture-scan#2", "failed.rollback_undone", true},
		{"commit-write#2", "failed.rollback_undone", true},
		{"ref-create#2", "failed.rollback_undone", true},
		{"log-append#3", "failed.rollback_undone", true},
		{"log-fsync#3", "failed.rollback_undone", true},
	} {
		tc := tc
		t.Run(tc.point, func(t *testing.T) {
			t.Parallel()
			env := failEnv(t)
			before := env.Snapshot()
			s := env.RecipeTree()
			refs := env.Git("for-each-ref", "--format=%(refname)", "refs/venom")
			env.RollbackFails([]string{"VENOM_TEST_FAIL_AT=" + tc.point}, 1, tc.code, "--agent=a1",
				"--checkpoint=k1", "--restore=files")
			after := env.Snapshot()
			if !tc.started {
				require.Equal(t, before, after, "something changed")
			}
			// Undone: the same files (rewritten, so with new times), index,
			// HEAD and branches.
			require.Equal(t, s, env.RecipeTree())
			require.Equal(t, before.Index, after.Index, "the index is not as it was")
			require.Equal(t, before.Head, after.Head)
			require.Equal(t, before.Refs, after.Refs, "a branch is not as it was")
			env.assertWholeLog(t)
			env.assertRefsLogged(t)
			if tc.started {
				ended := env.Records("rollback.ended")
				require.Len(t, ended, 1)
				require.Equal(t, tc.code, ended[0]["code"])
			} else {
				require.Empty(t, env.Records("rollback.started"))
				require.Equal(t, refs, env.Git("for-each-ref", "--format=%(refname)", "refs/venom"), "a ref was left")
			}
			// The next rollback works.
			rollbackExactly(t, env, "k1", "--restore=files")
		})
	}
}

func TestRobust_DiskFullRollback(t *testing.T) {
	t.Parallel()
	env := newEnvOn(t, "6m")
	env.Write("README.md", "hello\n")
	env.Commit("initial")
	big := make([]byte, 600<<10)
	_, _ = rand.Read(big)
	env.Write("big.bin", string(big))
	env.Write("small.txt", "small\n")
	agentTurn(t, env, func() {
		env.Remove("big.bin")
		env.Write("small.txt", "changed\n")
		env.Write("new.txt", "new\n")
	})
	failures := 0
	for _, free := range []int64{0, 16 << 10, 256 << 10, 550 << 10, 64 << 20} {
		plan := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files").Plan
		s := env.RecipeTree()
		filler := fillUpTo(t, env.Root, free)
		r := env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json")
		if err := os.Remove(filler); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		env.assertWholeLog(t)
		env.assertRefsLogged(t)
		if r.Code == 0 {
			require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
			break
		}
		failures++
		t.Logf("free %d: %s", free, strings.TrimSpace(r.Stdout))
		require.Equal(t, 1, r.Code, r.Stdout+r.Stderr)
		// No half-written file: big.bin is absent or whole.
		if b, err := os.ReadFile(env.Path("big.bin")); err == nil {
			require.Equal(t, len(big), len(b), "free %d: big.bin is half written", free)
		}
		if strings.Contains(r.Stdout, "failed.rollback_partial") {
			// The safety checkpoint is whole, and a person can roll back to it.
			var e struct {
				Error struct {
					Data struct{ Safety string } `json:"data"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &e))
			require.Equal(t, s, env.CheckpointTreeOf("a1", e.Error.Data.Safety))
			rollbackExactly(t, env, e.Error.Data.Safety, "--restore=files", "--outside=overwrite")
		} else {
			require.Equal(t, s, env.RecipeTree(), "free %d: the files are not S", free)
		}
	}
	require.NotZero(t, failures, "the disk never filled up")
	require.Equal(t, big, []byte(env.Read("big.bin")), "the rollback never succeeded")
}

// TestRobust_RollbackStartedFaultKeepsOnlyTheSafety: rollback.started
// cannot be logged; no file moved, and the safety checkpoint (logged) is
// all that was added.
func TestRobust_RollbackStartedFaultKeepsOnlyTheSafety(t *testing.T) {
	t.Parallel()
	env := failEnv(t)
	before := env.Snapshot()
	env.RollbackFails([]string{"VENOM_TEST_FAIL_AT=log-append#2"}, 1, "failed.state", "--agent=a1",
		"--checkpoint=k1", "--restore=files")
	env.AssertUntouched(t, before)
	env.assertWholeLog(t)
	env.assertRefsLogged(t)
	require.Empty(t, env.Records("rollback.started"))
	require.Equal(t, "pre_rollback", env.lastTaken().Reason)
	rollbackExactly(t, env, "k1", "--restore=files")
}

// TestRobust_RollbackFailsBetweenUnlinks: the third of five deletions
// fails; the two done are undone, and the files are S's again.
func TestRobust_RollbackFailsBetweenUnlinks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("keep.txt", "keep\n")
	env.Commit("base")
	agentTurn(t, env, func() {
		for i := 0; i < 5; i++ {
			env.Write(fmt.Sprintf("made/%d/new.txt", i), "new\n")
		}
		env.Write("keep.txt", "changed\n")
	})
	before := env.Snapshot()
	s := env.RecipeTree()
	env.RollbackFails([]string{"VENOM_TEST_FAIL_AT=rollback-unlink-each#3"}, 1, "failed.rollback_undone",
		"--agent=a1", "--checkpoint=k1", "--restore=files")
	require.Equal(t, s, env.RecipeTree(), "the files are not S again")
	after := env.Snapshot()
	require.Equal(t, before.Index, after.Index)
	require.Equal(t, before.Head, after.Head)
	require.Equal(t, before.Refs, after.Refs)
	env.assertWholeLog(t)
	env.assertRefsLogged(t)
	rollbackExactly(t, env, "k1", "--restore=files")
}
