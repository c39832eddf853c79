package tests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// gcNow is a person's `git gc --prune=now` then `git repack -a -d`: every
// object no ref, reflog or index reaches and no .keep pack holds is gone.
func gcNow(e *Env) {
	e.t.Helper()
	e.Git("-c", "gc.autoDetach=false", "gc", "--prune=now", "--quiet")
	e.Git("repack", "-a", "-d", "-q")
}

// fsckClean fails the test unless git fsck is clean.
func fsckClean(t *testing.T, e *Env) {
	t.Helper()
	f := e.GitRaw("fsck", "--no-dangling", "--no-progress")
	require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)
}

// gcWorld is rewrittenRepo with a person's edit of line 29 and a new
// file that no checkpoint holds, and a dry run made already: its
// capture's pack, let go at its end, holds their blobs and S's trees,
// which no ref reaches, so the next capture finds them stored. The
// commands name the agent: a dry run then captures beside its read of
// the log, on a libgit2 handle of its own, and the plan's handle never
// opened that pack (an open pack stays readable after git deletes it).
func gcWorld(t *testing.T) *Env {
	t.Helper()
	env, _ := rewrittenRepo(t)
	env.Write("f.txt", revLines(30, map[int]string{3: "t1 wrote line 3", 15: "t4 rewrote line 15",
		27: "t3 wrote line 27", 29: "a person wrote line 29"}))
	env.Write("notes/new.txt", "a person's new file, in no checkpoint\n")
	env.revertDry("--agent=a1", "--revert=t1")
	return env
}

// TestObjects_GcPruneNowBetweenCaptureAndPlan: a person's git gc
// --prune=now and git repack -a -d run at the worst moment of a dry run or
// a real call, between the capture of S and the plan that reads it. S's
// objects that no ref reaches (found stored by an earlier dry run, the
// memo's tree) must be held by the command until its last read: the
// command succeeds, with the plan it gives without the gc, and git fsck
// is clean.
func TestObjects_GcPruneNowBetweenCaptureAndPlan(t *testing.T) {
	t.Parallel()
	dry := map[string][]string{
		"revert":   {"--agent=a1", "--revert=t1"},
		"rollback": {"--agent=a1", "k2", "--restore=files"},
		"undo":     {"--agent=a1", "--undo", "--restore=files"},
	}
	for name, args := range dry {
		t.Run("dry run "+name, func(t *testing.T) {
			t.Parallel()
			env := gcWorld(t)
			if name == "undo" {
				env.Rollback("k3", "--restore=files")
				env.Write("notes/new.txt", "a person's edit after the rollback\n")
				env.DryRun(args...)
			}
			want := rollbackJSON[RollbackResult](env, args, "--dry-run")
			p := env.pause("dry-run-captured", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback",
				append(args, "--dry-run", "--json")...)
			gcNow(env)
			var got RollbackResult
			p.resume(t).OK(t).JSON(t, &got)
			require.Equal(t, want.Plan, got.Plan)
			fsckClean(t, env)
		})
	}
	for _, name := range []string{"revert", "rollback"} {
		t.Run("real "+name, func(t *testing.T) {
			t.Parallel()
			env := gcWorld(t)
			s := env.RecipeTree()
			args := dry[name]
			plan := rollbackJSON[RollbackResult](env, args, "--dry-run").Plan
			p := env.pause("rollback-captured", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback",
				append(args, "--plan="+plan, "--json")...)
			gcNow(env)
			var res RollbackResult
			p.resume(t).OK(t).JSON(t, &res)
			fsckClean(t, env)
			require.Equal(t, s, env.CheckpointTreeOf("a1", res.Safety), "the safety checkpoint is not S")
			env.Rollback("--undo", "--restore=files")
			require.Equal(t, s, env.RecipeTree(), "the undo did not give S back")
		})
	}
}

// TestObjects_GcPruneNowBeforeADiffReads: git venom-diff against the
// current files captures them under the lock, lets go of the lock, then
// reads the capture's tree. A person's gc --prune=now in between (the
// capture's objects found stored by an earlier dry run, its own pack's
// .keep gone with the lock) failed the diff: its capture is held until
// the diff is read, and the diff is the one it gives without the gc.
func TestObjects_GcPruneNowBeforeADiffReads(t *testing.T) {
	t.Parallel()
	env := gcWorld(t)
	// A file no capture has seen yet: its blob is the diff's own pack's.
	env.Write("notes/later.txt", "written after the dry run\n")
	args := []string{"--agent=a1", "--from=k1", "--json"}
	want := env.Venom("diff", args...).OK(t).Stdout
	env.Write("notes/latest.txt", "written after the first diff\n")
	want2 := env.Venom("diff", args...).OK(t).Stdout
	require.NotEqual(t, want, want2)
	p := env.pause("diff-captured", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "diff", args...)
	gcNow(env)
	got := p.resume(t).OK(t).Stdout
	require.Equal(t, want2, got)
	for _, path := range []string{"f.txt", "notes/new.txt", "notes/later.txt", "notes/latest.txt"} {
		require.Contains(t, got, path)
	}
	fsckClean(t, env)
}
