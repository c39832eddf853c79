package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// crashRollbackWorld is an in-place (guarded) agent whose one turn changed
// 1,000 files: 800 rewritten, 100 deleted, 100 made. k1 is the turn's
// start, k2 its end; it returns the files at k1 (T) and now (S).
func crashRollbackWorld(t *testing.T) (env *Env, tFiles, sFiles map[string]string) {
	t.Helper()
	env = NewEnv(t)
	for i := 0; i < 900; i++ {
		env.Write(fmt.Sprintf("src/%d/f%04d.txt", i%30, i), fmt.Sprintf("old %d\n", i))
	}
	env.Commit("the project")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	tFiles = worktreeFiles(t, env.Dir)
	for i := 0; i < 800; i++ {
		env.Write(fmt.Sprintf("src/%d/f%04d.txt", i%30, i), fmt.Sprintf("new %d, a longer line than before\n", i))
	}
	for i := 800; i < 900; i++ {
		env.Remove(fmt.Sprintf("src/%d/f%04d.txt", i%30, i))
	}
	for i := 0; i < 100; i++ {
		env.Write(fmt.Sprintf("made/%d/n%04d.txt", i%10, i), fmt.Sprintf("made %d\n", i))
	}
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	sFiles = worktreeFiles(t, env.Dir)
	return env, tFiles, sFiles
}

// assertOldOrNew checks that every path is either as it was (S) or as the
// rollback makes it (T), absent counting as a state, and that nothing else
// (a staging file, a half-written file under another name) is in the tree.
func assertOldOrNew(t *testing.T, dir string, tFiles, sFiles map[string]string) (restored, kept int) {
	t.Helper()
	now := worktreeFiles(t, dir)
	for p := range now {
		_, inT := tFiles[p]
		_, inS := sFiles[p]
		require.True(t, inT || inS, "%s is neither the old tree's nor the new one's", p)
	}
	seen := map[string]bool{}
	for _, m := range []map[string]string{tFiles, sFiles} {
		for p := range m {
			if seen[p] {
				continue
			}
			seen[p] = true
			got, ok := now[p]
			tv, inT := tFiles[p]
			sv, inS := sFiles[p]
			isT := ok == inT && (!ok || got == tv)
			isS := ok == inS && (!ok || got == sv)
			require.True(t, isT || isS, "%s is half-written or lost: present %v, %q", p, ok, got)
			if isT && !isS {
				restored++
			}
			if isS && !isT {
				kept++
			}
		}
	}
	return restored, kept
}

// TestCrash_RollbackKilledAtRandom: a real rollback of 1,000 files in a
// guarded tree SIGKILLed at a random moment. After each kill: index,
// HEAD, branches and stash as they were (docs/checkpoints.md#invariants);
// every file old or new, nothing else (docs/rollback.md#the-real-call);
// nothing written before the safety checkpoint; fsck clean; doctor names
// the rollback; the next capture settles it; undo gives S back exactly.
func TestCrash_RollbackKilledAtRandom(t *testing.T) {
	t.Parallel()
	rnd, tries := crashRand(t, 2)
	env, tFiles, sFiles := crashRollbackWorld(t)
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite"}
	sTree := env.RecipeTree()
	require.Equal(t, sTree, env.CheckpointTree("a1", 2))

	// The first run is not killed: its time sets the span the kills are
	// spread over, and it covers a kill that comes too late.
	span := time.Hour
	for try := 0; try <= tries; try++ {
		t0 := time.Now()
		snap := env.Snapshot()
		started := len(env.Records("rollback.started"))
		plan := env.DryRun(args...).Plan
		d := span
		if try > 0 {
			d = delay(rnd, try-1, tries, span)
		}
		t1 := time.Now()
		k := env.runKilled(t, d, nil, "rollback", append(args, "--plan="+plan, "--json")...)
		if try == 0 {
			k.res.OK(t)
			span = time.Since(t1) + time.Since(t1)/8
		}
		now := env.Snapshot()
		require.Equal(t, snap.Index, now.Index, "try %d (%v): the user's index was written", try, d)
		require.Equal(t, snap.Head, now.Head, "try %d: HEAD", try)
		require.Equal(t, snap.Refs, now.Refs, "try %d: a branch or tag moved", try)
		require.Equal(t, snap.Stash, now.Stash, "try %d: the stash", try)
		require.Equal(t, snap.IndexLck, now.IndexLck, "try %d: index.lock", try)
		restored, kept := assertOldOrNew(t, env.Dir, tFiles, sFiles)
		t.Logf("try %d: killed after %v (ended by itself: %v): %d paths restored, %d not yet",
			try, d, k.finished, restored, kept)
		env.assertCrashLeftovers(t)

		recs := env.Records("rollback.started")
		if len(recs) == started {
			// Killed before the safety checkpoint: nothing written.
			require.Zero(t, restored, "try %d: files written before the safety checkpoint", try)
			require.Equal(t, sTree, env.RecipeTree())
			continue
		}
		safety := recs[len(recs)-1]["safety"].(string)
		require.Equal(t, sTree, env.CheckpointTreeOf("a1", safety), "try %d: the safety checkpoint is not S", try)
		if !k.finished {
			// The next capture settles it, writing nothing to the tree.
			before := worktreeFiles(t, env.Dir)
			want := env.RecipeTree()
			res := env.Take(t, "--agent=a1")
			require.Equal(t, want, env.CheckpointTreeOf("a1", *res.Checkpoint))
			require.Equal(t, before, worktreeFiles(t, env.Dir), "try %d: settling wrote to the tree", try)
			ended := env.Records("rollback.ended")
			last := ended[len(ended)-1]
			if last["ok"] == false {
				require.Equal(t, "failed.rollback_interrupted", last["code"])
				require.Equal(t, "ok", env.doctorChecks(t)["state.rollback"])
			}
		}
		require.Len(t, env.Records("rollback.ended"), len(env.Records("rollback.started")))
		require.Equal(t, safety, env.DryRun("--agent=a1", "--undo", "--restore=files", "--outside=overwrite").Checkpoint,
			"try %d: --undo does not go back to the rollback's safety checkpoint", try)
		env.Rollback("--agent=a1", "--undo", "--restore=files", "--outside=overwrite")
		require.Equal(t, sTree, env.RecipeTree(), "try %d: the safety checkpoint did not give S back", try)
		require.Equal(t, sFiles, worktreeFiles(t, env.Dir))
		env.AssertSeqGapless(t)
		t.Logf("try %d took %v", try, time.Since(t0))
	}
	require.Empty(t, env.TmpFiles())
}

// captureKill is one kind of capture killed at random: its extra
// environment, the world before the first kill, the change each try
// makes, and what it checks after each kill beyond the common checks.
type captureKill struct {
	extra  []string
	args   []string
	setup  func(t *testing.T, env *Env)
	change func(env *Env, try int)
	check  func(t *testing.T, env *Env)
	tries  int // kills in a short run; 3 when 0
}

// TestCrash_CaptureKilledAtRandom: captures (600 changed files, one that
// starts a pack merge, one that writes the fold snapshot) SIGKILLed after
// a random delay. After each: nothing the user sees changed, the lock
// free, fsck clean, the journal whole but a torn tail, no unlogged ref but
// the next, no temporary or index-less pack; the next capture whole, and
// at the end a rollback to the first checkpoint.
func TestCrash_CaptureKilledAtRandom(t *testing.T) {
	t.Parallel()
	cases := map[string]captureKill{
		"plain": {
			args: []string{"--agent=a1"},
			setup: func(t *testing.T, env *Env) {
				for i := 0; i < 600; i++ {
					env.Write(fmt.Sprintf("d%d/f%d.txt", i%20, i), "start\n")
				}
				env.Commit("600 files")
			},
			change: func(env *Env, try int) {
				for i := 0; i < 600; i += 1 + try%3 {
					env.Write(fmt.Sprintf("d%d/f%d.txt", i%20, i), fmt.Sprintf("try %d\n", try))
				}
				env.Write(fmt.Sprintf("new/%d.txt", try), "new\n")
			},
		},
		"pack merge": {
			extra: []string{"VENOM_TEST_PACK_THRESHOLD=2"},
			args:  []string{"--agent=a1"},
			setup: func(t *testing.T, env *Env) {
				for i := 0; i < 4; i++ {
					env.Write("work.txt", fmt.Sprintf("before %d\n", i))
					env.Venom("checkpoint", "--agent=a1").OK(t)
				}
			},
			change: func(env *Env, try int) {
				env.Write("work.txt", fmt.Sprintf("try %d\n", try))
				env.Write(fmt.Sprintf("new/%d.txt", try), "new\n")
			},
			check: func(t *testing.T, env *Env) {
				files, _ := filepath.Glob(env.Path(".git/objects/pack/*"))
				for _, f := range files {
					if strings.HasSuffix(f, ".pack") {
						require.FileExists(t, strings.TrimSuffix(f, ".pack")+".idx", "a pack without its index")
					}
				}
				for _, r := range env.VenomRefs() {
					name, _, _ := strings.Cut(r, "=")
					env.Git("cat-file", "-e", name+"^{tree}")
				}
			},
		},
		"fold snapshot": {
			extra: []string{"VENOM_TEST_FOLD_EVERY=1"},
			args:  []string{"--agent=a1", "--reason=turn_end"},
			setup: func(t *testing.T, env *Env) {
				env.SetGlobal("venom.keep", "2")
				foldHistory(t, env, 3, 0)
			},
			change: func(env *Env, try int) {
				env.Venom("checkpoint", "--agent=a1", "--reason=turn_start").OK(env.t)
				env.Write(fmt.Sprintf("f%d.txt", try%3), fmt.Sprintf("try %d\n", try))
			},
			check: func(t *testing.T, env *Env) { assertAsWholeFold(t, env) },
			tries: 2, // each check runs sixteen commands
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			short := c.tries
			if short == 0 {
				short = 3
			}
			rnd, tries := crashRand(t, short)
			env := NewEnv(t)
			env.Extra = append(env.Extra, c.extra...)
			env.Write("a.txt", "first\n")
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			first := env.RecipeTree()
			c.setup(t, env)
			c.change(env, 0)
			_, span := env.timed(t, nil, "checkpoint", append(c.args, "--json")...)
			for try := 0; try < tries; try++ {
				c.change(env, try+1)
				env.Tick()
				snap := env.Snapshot()
				d := delay(rnd, try, tries, span)
				k := env.runKilled(t, d, nil, "checkpoint", append(c.args, "--json")...)
				t.Logf("try %d: killed after %v of %v (ended by itself: %v)", try, d, span, k.finished)
				env.AssertUntouched(t, snap)
				env.assertCrashLeftovers(t)
				if c.check != nil {
					c.check(t, env)
				}
				want := env.RecipeTree()
				res := env.Take(t, c.args...)
				require.Equal(t, want, env.CheckpointTreeOf("a1", *res.Checkpoint), "try %d: the next capture", try)
				env.assertWholeLog(t)
				env.assertRefsLogged(t)
				require.Empty(t, env.TmpFiles())
			}
			env.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
			require.Equal(t, first, env.RecipeTree())
		})
	}
}

// TestCrash_DryRunKilledAtRandom: a dry run, killed at random, changes
// nothing at all: not the user's state, not the journal's bytes, not a
// ref; it leaves the lock free and doctor all ok, and the next dry run
// gives the same plan.
func TestCrash_DryRunKilledAtRandom(t *testing.T) {
	t.Parallel()
	rnd, tries := crashRand(t, 3)
	env, _, _ := crashRollbackWorld(t)
	env.Write("src/0/f0000.txt", "after the turn\n")
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite", "--dry-run", "--json"}
	r, span := env.timed(t, nil, "rollback", args...)
	r.OK(t)
	var want RollbackResult
	r.JSON(t, &want)
	log := filepath.Join(env.StateDir(), "log.jsonl")
	for try := 0; try < tries; try++ {
		snap := env.Snapshot()
		logBefore := fileHash(log)
		refs := env.VenomRefs()
		d := delay(rnd, try, tries, span)
		k := env.runKilled(t, d, nil, "rollback", args...)
		t.Logf("try %d: killed after %v of %v (ended by itself: %v)", try, d, span, k.finished)
		env.AssertUntouched(t, snap)
		require.Equal(t, logBefore, fileHash(log), "a dry run wrote to the journal")
		require.Equal(t, refs, env.VenomRefs())
		require.True(t, lockFree(env))
		env.assertCrashLeftovers(t)
		require.Equal(t, want.Plan, env.DryRun(args[:4]...).Plan)
	}
}

// TestCrash_UnguardedRollbackKilledAtRandom: the real rollback of an
// unguarded tree (HEAD and the index move back with the files), killed
// with SIGKILL after a random delay. After every kill: the branch is where
// it was or where the rollback takes it; the index is the user's or holds
// the new HEAD's tree; every file old or new; no temporary file beside the
// index; the common checks; and the undo (--keep-head) gives the files back.
func TestCrash_UnguardedRollbackKilledAtRandom(t *testing.T) {
	t.Parallel()
	rnd, tries := crashRand(t, 2)
	env := NewEnv(t)
	for i := 0; i < 300; i++ {
		env.Write(fmt.Sprintf("src/%d/f%03d.txt", i%10, i), fmt.Sprintf("old %d\n", i))
	}
	c0 := env.CommitID("the project")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	tFiles := worktreeFiles(t, env.Dir)
	for i := 0; i < 300; i++ {
		env.Write(fmt.Sprintf("src/%d/f%03d.txt", i%10, i), fmt.Sprintf("new %d\n", i))
	}
	c1 := env.CommitID("the agent's commit")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	sFiles := worktreeFiles(t, env.Dir)
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files"}
	userIndex := env.IndexHash()

	span := time.Hour
	for try := 0; try <= tries; try++ {
		started := len(env.Records("rollback.started"))
		plan := env.DryRun(args...).Plan
		d := span
		if try > 0 {
			d = delay(rnd, try-1, tries, span)
		}
		t1 := time.Now()
		k := env.runKilled(t, d, nil, "rollback", append(args, "--plan="+plan, "--json")...)
		if try == 0 {
			k.res.OK(t)
			span = time.Since(t1)
		}
		head := env.Git("rev-parse", "refs/heads/main")
		require.Contains(t, []string{c0, c1}, head, "try %d: main is neither", try)
		require.Equal(t, "refs/heads/main", env.Git("symbolic-ref", "HEAD"))
		if env.IndexHash() != userIndex {
			r := env.GitRaw("diff", "--cached", "--quiet", c0)
			require.Equal(t, 0, r.Code, "try %d: the index is neither the user's nor the new HEAD's", try)
		}
		restored, kept := assertOldOrNew(t, env.Dir, tFiles, sFiles)
		t.Logf("try %d: killed after %v (ended by itself: %v): main at %s, %d restored, %d not yet",
			try, d, k.finished, map[string]string{c0: "C0", c1: "C1"}[head], restored, kept)
		leftovers, _ := filepath.Glob(env.Path(".git/index.venom-restore-*"))
		require.Empty(t, leftovers, "try %d", try)
		// git read-tree or update-ref killed while it held a lock: git's
		// own leftover, which git-venom never removes: only git knows
		// whether its holder is gone.
		for _, name := range []string{"index.lock", "HEAD.lock", "refs/heads/main.lock"} {
			if lock := env.Path(".git/" + name); fileHash(lock) != "absent" {
				t.Logf("try %d: git's %s left by the killed git", try, name)
				require.NoError(t, os.Remove(lock))
			}
		}
		env.assertCrashLeftovers(t)

		recs := env.Records("rollback.started")
		if len(recs) == started {
			require.Zero(t, restored, "try %d: files written before the safety checkpoint", try)
			require.Equal(t, c1, head)
			continue
		}
		safety := recs[len(recs)-1]["safety"].(string)
		env.Take(t, "--agent=a1") // settles an interrupted rollback
		// Back to where the turn ended: the branch at C1, the files S.
		if head != c1 {
			env.Git("update-ref", "refs/heads/main", c1, c0)
		}
		env.Git("read-tree", c1)
		userIndex = env.IndexHash()
		env.Rollback("--agent=a1", "--checkpoint="+safety, "--restore=files", "--outside=overwrite", "--keep-head")
		require.Equal(t, sFiles, worktreeFiles(t, env.Dir), "try %d: the undo", try)
		env.Git("update-index", "-q", "--refresh")
		userIndex = env.IndexHash()
	}
}
