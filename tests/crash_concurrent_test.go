package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The user's own git commands run while a rollback is under way: the
// rollback is held at rollback-apply-staged (its files staged, none yet in
// the tree, HEAD not moved), the user's command runs, and the rollback goes
// on. Whatever the outcome (done, undone, partial), nothing the user's
// command made is lost and the user's HEAD, branch and index agree.

// userRaceWorld: agent a1 in the main worktree, unguarded
// (--isolation=worktree). Its turn commits C1 on main over the initial C0
// and leaves a file of its own; branch other is at C1 too. The rollback to
// k1 (the turn's start) writes files back and moves main from C1 to C0.
func userRaceWorld(t *testing.T) (env *Env, c0, c1 string) {
	t.Helper()
	env = NewEnv(t)
	env.Write("keep/a.txt", "a\n")
	c0 = env.CommitID("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("keep/a.txt", "the agent's\n")
	env.Write("made/by/turn.txt", "new\n")
	c1 = env.CommitID("the agent's commit")
	env.Write("scratch.txt", "the agent's scratch\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Git("branch", "other")
	return env, c0, c1
}

// raceRollback runs the real rollback to k1 held at rollback-apply-staged,
// runs user meanwhile, and returns the rollback's result.
func raceRollback(t *testing.T, env *Env, args []string, user func()) Result {
	t.Helper()
	plan := env.DryRun(args...).Plan
	resume := env.startResumable("rollback-apply-staged", "rollback", append(args, "--plan="+plan, "--json")...)
	user()
	r := resume()
	require.NotContains(t, r.Stderr, "panic:")
	t.Logf("the rollback: exit %d %s", r.Code, strings.TrimSpace(r.Stdout))
	return r
}

// assertIndexIsHead: the user's index holds HEAD's tree and nothing the
// user did not stage.
func assertIndexIsHead(t *testing.T, env *Env, why string) {
	t.Helper()
	r := env.GitRaw("diff", "--cached", "--name-status", "HEAD")
	require.Equal(t, 0, r.Code, r.Stderr)
	require.Empty(t, strings.TrimSpace(r.Stdout), "%s: the index differs from HEAD", why)
}

// TestCrash_RollbackWhileTheUserChecksOut: the person checks out another
// branch at the same commit, or detaches HEAD there, while an unguarded
// rollback writes its files. HEAD is not the rollback's any more: it must
// not move the branch it planned to move nor reset the index, which now
// belong to another checkout; it fails and is undone (docs/rollback.md#failures).
func TestCrash_RollbackWhileTheUserChecksOut(t *testing.T) {
	t.Parallel()
	for name, checkout := range map[string][]string{
		"another branch": {"checkout", "-q", "other"},
		"detached":       {"checkout", "-q", "--detach"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, _, c1 := userRaceWorld(t)
			args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files"}
			var indexAfter, headAfter string
			r := raceRollback(t, env, args, func() {
				env.Git(checkout...)
				indexAfter = env.IndexHash()
				headAfter = env.Snapshot().Head
			})
			require.Equal(t, headAfter, env.Snapshot().Head, "HEAD is the person's")
			require.Equal(t, c1, env.Git("rev-parse", "refs/heads/other"))
			require.Equal(t, c1, env.Git("rev-parse", "refs/heads/main"),
				"the rollback moved main, which is no longer checked out: %s", r.Stdout)
			require.Equal(t, indexAfter, env.IndexHash(), "the rollback wrote the index of the person's checkout")
			assertIndexIsHead(t, env, "after the checkout")
			r.Fails(t, 1, "failed.rollback_undone")
			env.assertCrashLeftovers(t)
			// The rollback can be asked again, from the new HEAD, with --keep-head.
			env.Rollback(append(args, "--keep-head")...)
			require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
		})
	}
}

// TestCrash_RollbackWhileTheUserCommits: the person commits while an
// unguarded rollback writes its files. The branch's compare-and-swap fails
// and the rollback is undone: its files back to S. It is not "partial": the
// way back did not fail, and HEAD moved by the person's hand, not the
// rollback's. The person's commit stays on the branch, their index stays
// as the commit left it, byte for byte, and the safety checkpoint holds S.
func TestCrash_RollbackWhileTheUserCommits(t *testing.T) {
	t.Parallel()
	env, _, _ := userRaceWorld(t)
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files"}
	sTree := env.RecipeTree()
	var c2, indexAfter string
	r := raceRollback(t, env, args, func() {
		// A commit that changes no file: only HEAD differs from S.
		env.Git("commit", "-q", "--allow-empty", "-m", "the person's commit")
		c2 = env.Git("rev-parse", "HEAD")
		indexAfter = env.IndexHash()
	})
	r.Fails(t, 1, "failed.rollback_undone")
	require.Equal(t, c2, env.Git("rev-parse", "refs/heads/main"), "the person's commit was dropped")
	require.Equal(t, "refs/heads/main", env.Git("symbolic-ref", "HEAD"))
	require.Equal(t, indexAfter, env.IndexHash(), "the person's index changed")
	require.Equal(t, sTree, env.CheckpointTree("a1", 3), "the safety checkpoint is not S")
	require.Equal(t, env.RecipeTree(), sTree, "the files are not back to S")
	env.assertCrashLeftovers(t)
}

// TestCrash_RollbackWhileTheUserStashes: the person stashes an edit while
// a rollback writes its files, in a guarded and an unguarded tree. The
// stash keeps the edit; the guarded rollback leaves the index as the stash
// made it, byte for byte, and the unguarded one resets it to the new HEAD;
// the after-capture says what is on disk (exact: false).
func TestCrash_RollbackWhileTheUserStashes(t *testing.T) {
	t.Parallel()
	for _, guarded := range []bool{false, true} {
		t.Run(map[bool]string{false: "unguarded", true: "guarded"}[guarded], func(t *testing.T) {
			t.Parallel()
			env, c0, c1 := userRaceWorld(t)
			if guarded {
				// A second agent in the tree makes it guarded.
				env.Venom("checkpoint", "--agent=a2", "--json").OK(t)
			}
			env.Write("README.md", "the person's edit\n")
			args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=keep"}
			var indexAfter string
			r := raceRollback(t, env, args, func() {
				env.Git("stash", "-q")
				indexAfter = env.IndexHash()
			})
			r.OK(t)
			var res RollbackResult
			r.JSON(t, &res)
			require.False(t, *res.Exact, "README.md changed under the rollback")
			require.Contains(t, env.Git("stash", "show", "-p", "stash@{0}"), "+the person's edit")
			require.Equal(t, "hello\n", env.Read("README.md"))
			if guarded {
				require.Equal(t, indexAfter, env.IndexHash(), "a guarded rollback wrote the index")
				require.Equal(t, c1, env.Git("rev-parse", "HEAD"))
			} else {
				require.Equal(t, c0, env.Git("rev-parse", "HEAD"))
				assertIndexIsHead(t, env, "after the rollback")
			}
			env.Git("stash", "pop", "-q")
			require.Equal(t, "the person's edit\n", env.Read("README.md"))
			env.assertCrashLeftovers(t)
		})
	}
}

// TestCrash_RollbackWhileGitGCRuns: the person's git gc --auto (made to
// run: gc.auto=1) repacks everything, git-venom's own packs included,
// while a rollback writes its files. The rollback ends well, every
// checkpoint's objects are there, and the captures after it (merging
// git-venom's packs every time, threshold 2) go on.
func TestCrash_RollbackWhileGitGCRuns(t *testing.T) {
	t.Parallel()
	env, _, _ := userRaceWorld(t)
	env.Extra = append(env.Extra, "VENOM_TEST_PACK_THRESHOLD=2")
	for i := 0; i < 3; i++ {
		env.Write("scratch.txt", strings.Repeat("x", i+1)+"\n")
		env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	}
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--keep-head"}
	r := raceRollback(t, env, args, func() {
		env.Git("-c", "gc.auto=1", "-c", "gc.autoPackLimit=1", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
	})
	r.OK(t)
	env.assertCrashLeftovers(t)
	for i := 0; i < 4; i++ {
		env.Write("scratch.txt", strings.Repeat("y", i+1)+"\n")
		env.Take(t, "--agent=a1")
		if i == 1 {
			env.Git("-c", "gc.auto=1", "-c", "gc.autoPackLimit=1", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
		}
	}
	env.assertCrashLeftovers(t)
	env.Rollback("--agent=a1", "--checkpoint=k2", "--restore=files", "--keep-head", "--outside=overwrite")
	require.Equal(t, env.CheckpointTree("a1", 2), env.RecipeTree())
}

// TestCrash_RollbackWhileTheUserFetches: a git fetch while an unguarded
// rollback writes its files brings the commit the rollback drops onto a
// remote-tracking ref. Moving the branch back now would make the next push
// a force push: docs/rollback.md#head's conflict.commits_pushed. The
// rollback must not move the branch past a commit that became pushed
// meanwhile; it fails and is undone.
func TestCrash_RollbackWhileTheUserFetches(t *testing.T) {
	t.Parallel()
	env, _, c1 := userRaceWorld(t)
	origin := env.Root + "/origin.git"
	env.Git("init", "-q", "--bare", origin)
	env.Git("push", "-q", origin, "main:main")
	env.Git("remote", "add", "origin", origin)
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files"}
	r := raceRollback(t, env, args, func() {
		env.Git("fetch", "-q", "origin")
		require.Equal(t, c1, env.Git("rev-parse", "refs/remotes/origin/main"))
	})
	require.Equal(t, c1, env.Git("rev-parse", "refs/heads/main"),
		"the rollback dropped a commit that is on origin/main now: %s", r.Stdout)
	r.Fails(t, 1, "failed.rollback_undone")
	assertIndexIsHead(t, env, "after the rollback")
	env.assertCrashLeftovers(t)
	// As the dry run now says.
	env.Venom("rollback", append(args, "--dry-run", "--json")...).Fails(t, 5, "conflict.commits_pushed")
}

// TestCrash_LockHeldByAStoppedProcess: a capture stopped (SIGSTOP) while
// holding the lock keeps it. Others meet venom.timeout with their code and
// write nothing: captures time out (7), a rollback of the same agent is
// conflict.checkpoint_pending, of another times out, a hook exits 0; list
// and doctor read on, calling nothing stale. After SIGCONT it finishes.
func TestCrash_LockHeldByAStoppedProcess(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.Take(t, "--agent=a2")
	env.Write("a.txt", "a1's work\n")
	// The stopped capture's own deadline is far off: its backstop
	// (venom.timeout and 5 s, 1d6a62c) would otherwise end it once it goes
	// on, when the commands below took longer than that on a busy
	// machine. The others meet the 1 s one.
	long := filepath.Join(env.Root, "long-timeout.gitconfig")
	b, err := os.ReadFile(filepath.Join(env.Home, ".gitconfig"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(long, append(b, "[venom]\n\ttimeout = 10m\n"...), 0o644))
	env.SetGlobal("venom.timeout", "1s")
	want := env.RecipeTree()

	p := env.pause("after-ref", []string{"VENOM_TEST_PAUSE_RESUME=1", "GIT_CONFIG_GLOBAL=" + long},
		"checkpoint", "--agent=a1", "--json")
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
		}
	}()
	// Every thread stopped before the pause file goes: a thread kill(2)
	// has not stopped yet would see it gone and finish the capture.
	stopGroup(t, p.cmd.Process.Pid)
	require.NoError(t, os.Remove(p.file)) // it would go on now, but it is stopped
	require.False(t, lockFree(env))
	snap := env.Snapshot()
	logBefore := fileHash(filepath.Join(env.StateDir(), "log.jsonl"))
	refs := env.VenomRefs()

	env.Venom("checkpoint", "--agent=a1", "--json").Fails(t, 7, "timeout.checkpoint")
	env.Venom("checkpoint", "--agent=a2", "--json").Fails(t, 7, "timeout.checkpoint")
	env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--dry-run", "--json").
		Fails(t, 5, "conflict.checkpoint_pending")
	plan := env.DryRun("--agent=a2", "--checkpoint=k1", "--restore=files", "--outside=overwrite").Plan
	env.Venom("rollback", "--agent=a2", "--checkpoint=k1", "--restore=files", "--outside=overwrite", "--plan="+plan, "--json").
		Fails(t, 7, "timeout.lock")
	h := env.VenomInput(env.Payload("claude/hooks/Stop.json", nil), "checkpoint", "hook", "claude-code", "--agent=a1")
	require.Equal(t, 0, h.Code, "a hook must never break the harness: %s", h.Stderr)
	require.NotEmpty(t, h.Stderr, "the hook's failure is not reported")
	require.True(t, env.List(t, "--agent=a1").Pending)
	doc := env.doctorChecks(t)
	require.Equal(t, "ok", doc["state.lock"], "a live holder is not a stale lock")
	// The ref the stopped capture made is about to be logged: doctor must
	// not call it an orphan, nor advise deleting it.
	require.Equal(t, "ok", doc["checkpoints.refs"], "doctor advises deleting the ref a live capture is writing")
	require.NotContains(t, env.Venom("checkpoint", "doctor").Stdout+env.Venom("checkpoint", "doctor").Stderr, "update-ref -d")

	env.AssertUntouched(t, snap)
	require.Equal(t, logBefore, fileHash(filepath.Join(env.StateDir(), "log.jsonl")), "written without the lock")
	require.Equal(t, refs, env.VenomRefs())

	// It goes on, and finishes its capture whole.
	require.NoError(t, syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT))
	stopped = false
	<-p.done
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	require.Equal(t, want, env.CheckpointTree("a1", 2))
	env.assertCrashLeftovers(t)
	env.assertWholeLog(t)
	env.assertRefsLogged(t)
	require.False(t, env.List(t, "--agent=a1").Pending)
	env.Write("a.txt", "more\n")
	require.Equal(t, "k3", *env.Take(t, "--agent=a1").Checkpoint)
}

// TestCrash_TwoAgentsInOneTree: a1 and a2 share one (guarded) tree. While
// a1's rollback holds the lock (held at rollback-apply-staged), a2's dry
// run and real call are refused at once with conflict.rollback_running
// (exit 5), and a2's capture waits for the lock and then takes the tree as
// it is. Afterwards nothing is lost: the journal and refs agree, a1's
// safety checkpoint holds S, and a2 can roll back.
func TestCrash_TwoAgentsInOneTree(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("shared.txt", "base\n")
	env.Commit("base")
	env.Take(t, "--agent=a2")
	env.Turn("a1", func() {
		env.Write("shared.txt", "a1's turn\n")
		env.Write("a1.txt", "a1's file\n")
	})
	sTree := env.RecipeTree()
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite"}
	a2 := []string{"--agent=a2", "--checkpoint=k1", "--restore=files", "--outside=overwrite"}
	a2plan := env.DryRun(a2...).Plan
	plan := env.DryRun(args...).Plan

	resume := env.startResumable("rollback-apply-staged", "rollback", append(args, "--plan="+plan, "--json")...)
	env.Venom("rollback", append(a2, "--dry-run", "--json")...).Fails(t, 5, "conflict.rollback_running")
	env.Venom("rollback", append(a2, "--plan="+a2plan, "--json")...).Fails(t, 5, "conflict.rollback_running")
	capture := env.Command(nil, "checkpoint", "--agent=a2", "--json")
	var out strings.Builder
	capture.Stdout = &out
	require.NoError(t, capture.Start())
	r := resume()
	r.OK(t)
	require.NoError(t, capture.Wait(), "a2's capture behind a1's rollback")
	var taken TakeResult
	require.NoError(t, json.Unmarshal([]byte(out.String()), &taken))

	env.assertCrashLeftovers(t)
	env.assertWholeLog(t)
	env.assertRefsLogged(t)
	require.Equal(t, sTree, env.CheckpointTreeOf("a1", "k3"), "a1's safety checkpoint")
	require.Equal(t, env.CheckpointTree("a1", 1), env.CheckpointTreeOf("a2", *taken.Checkpoint),
		"a2's capture did not wait for the rollback's files")
	env.Rollback(a2...)
	require.Equal(t, env.CheckpointTree("a2", 1), env.RecipeTree())
}
