package tests

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRevert_GcPruneNowMidRevert: a person's git gc --prune=now (and a
// repack -a -d) while a real revert holds its merged files' blobs and
// has not placed them yet: the revert still writes the merged file, the
// report says so, and git fsck is clean.
func TestRevert_GcPruneNowMidRevert(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"rollback-before-safety", "rollback-after-safety"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			env, _ := rewrittenRepo(t)
			// A person's edit elsewhere in the file: the merged file is
			// new content no checkpoint holds.
			edits := map[int]string{3: "t1 wrote line 3", 15: "t4 rewrote line 15", 27: "t3 wrote line 27",
				29: "a person wrote line 29"}
			env.Write("f.txt", revLines(30, edits))
			plan := env.revertDry("--revert=t1").Plan
			p := env.pause(point, []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback", "--revert=t1",
				"--plan="+plan, "--json")
			env.Git("gc", "--prune=now", "--quiet")
			env.Git("repack", "-a", "-d", "-q")
			env.Git("prune", "--expire=now")
			r := p.resume(t)
			r.OK(t)
			delete(edits, 3)
			require.Equal(t, revLines(30, edits), env.Read("f.txt"))
			f := env.GitRaw("fsck", "--no-dangling", "--no-progress")
			require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)
			env.Rollback("--undo", "--restore=files")
			edits[3] = "t1 wrote line 3"
			require.Equal(t, revLines(30, edits), env.Read("f.txt"))
		})
	}
}

// revertSignalWorld: an unguarded agent whose t1 edits line 3 of 120
// files, deletes 20 and makes 20; t2 then edits line 20 of the same 120
// files. Reverting t1 merges 120 files (new blobs), brings 20 back and
// deletes 20. It returns S's files.
func revertSignalWorld(t *testing.T) (*Env, map[string]string) {
	t.Helper()
	files := map[string]string{}
	for i := 0; i < 140; i++ {
		files[fmt.Sprintf("d%d/f%03d.txt", i%4, i)] = revLines(24, nil)
	}
	env := revertBase(t, files)
	env.Turn("a1", func() {
		for i := 0; i < 120; i++ {
			env.Write(fmt.Sprintf("d%d/f%03d.txt", i%4, i), revLines(24, map[int]string{3: fmt.Sprintf("t1 %d", i)}))
		}
		for i := 120; i < 140; i++ {
			env.Remove(fmt.Sprintf("d%d/f%03d.txt", i%4, i))
			env.Write(fmt.Sprintf("new/n%03d.txt", i), "made by t1\n")
		}
	})
	env.Turn("a1", func() {
		for i := 0; i < 120; i++ {
			env.Write(fmt.Sprintf("d%d/f%03d.txt", i%4, i),
				revLines(24, map[int]string{3: fmt.Sprintf("t1 %d", i), 20: fmt.Sprintf("t2 %d", i)}))
		}
	})
	return env, worktreeFiles(t, env.Dir)
}

// TestRevert_SignalAtRandomMoments (VENOM_TEST_SEED replays): SIGINT,
// SIGTERM, SIGHUP or SIGKILL at a random moment of a real revert of 160
// paths. Whatever the moment: every file S's or the revert's; the report
// matches the tree; once logged, the safety checkpoint holds S; a killed
// revert is settled by the next capture; lock free, fsck clean, log gapless.
func TestRevert_SignalAtRandomMoments(t *testing.T) {
	t.Parallel()
	rnd, tries := crashRand(t, 6)
	env, sFiles := revertSignalWorld(t)
	s := env.RecipeTree()
	args := []string{"--agent=a1", "--revert=t1"}
	plan := env.revertDry(args...).Plan
	_, span := env.timed(t, nil, "rollback", append(args, "--plan="+plan, "--json")...)
	rFiles := worktreeFiles(t, env.Dir)
	require.NotEqual(t, sFiles, rFiles)
	require.Equal(t, revLines(24, map[int]string{20: "t2 7"}), rFiles["d3/f007.txt"])
	env.Rollback("--undo", "--agent=a1", "--restore=files")
	require.Equal(t, s, env.RecipeTree())
	signals := append(append([]syscall.Signal{}, stopSignals...), syscall.SIGKILL)
	for try := 0; try < tries; try++ {
		sig := signals[rnd.Intn(len(signals))]
		d := delay(rnd, try, tries, span)
		plan := env.revertDry(args...).Plan
		started := len(env.Records("rollback.started"))
		r := env.signalAfter(t, d, sig, "rollback", append(args, "--plan="+plan)...)
		code := r.Code
		t.Logf("try %d: %s after %s of %s: exit %d: %s%s", try, sig, d, span, code, r.Stdout, r.Stderr)
		restored, kept := assertOldOrNew(t, env.Dir, rFiles, sFiles)
		f := env.GitRaw("fsck", "--no-dangling", "--no-progress")
		require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)
		recs := env.Records("rollback.started")
		if len(recs) > started {
			safety := recs[len(recs)-1]["safety"].(string)
			require.Equal(t, s, env.CheckpointTreeOf("a1", safety), "try %d: the safety checkpoint is not S", try)
		}
		switch {
		case code == 0:
			require.Equal(t, rFiles, worktreeFiles(t, env.Dir), "done, but the tree is not the revert's")
			runPrintedUndo(t, env, r.Stdout)
		case sig == syscall.SIGKILL || code == -1:
			t.Logf("try %d: %d paths reverted, %d not yet", try, restored, kept)
			if len(recs) == started {
				require.Zero(t, restored, "try %d: files written before the safety checkpoint", try)
				break
			}
			ended := env.Records("rollback.ended")
			if len(ended) < len(recs) {
				// The next capture settles it, writing nothing.
				before := worktreeFiles(t, env.Dir)
				env.Take(t, "--agent=a1")
				require.Equal(t, before, worktreeFiles(t, env.Dir), "try %d: settling wrote to the tree", try)
				ended = env.Records("rollback.ended")
				require.Equal(t, "failed.rollback_interrupted", ended[len(ended)-1]["code"])
				require.Equal(t, "t1", ended[len(ended)-1]["revert"])
			} else if ended[len(ended)-1]["ok"] == true {
				require.Equal(t, rFiles, worktreeFiles(t, env.Dir), "logged done, but the tree is not the revert's")
			}
			// --undo goes back to the killed revert's safety checkpoint,
			// whatever the tree (docs/rollback.md#undo).
			safety := recs[len(recs)-1]["safety"].(string)
			require.Equal(t, safety, env.revertDry("--undo", "--agent=a1", "--restore=files").Checkpoint)
			if ended[len(ended)-1]["ok"] == false {
				screen := env.Venom("rollback", "--undo", "--agent=a1", "--restore=files", "--dry-run").OK(t).Stdout
				require.Contains(t, strings.Join(strings.Fields(screen), " "), "Undo the revert of t1 of a1, which did not end")
			}
			env.Rollback("--undo", "--agent=a1", "--restore=files")
		case strings.Contains(r.Stderr, "failed.interrupted"):
			require.Equal(t, 1, code)
		default:
			require.Equal(t, 1, code, "%s", r.Stderr)
			require.Contains(t, r.Stderr, "failed.rollback_undone")
		}
		require.Equal(t, s, env.RecipeTree(), "try %d: the tree is not S again", try)
		require.Equal(t, sFiles, worktreeFiles(t, env.Dir))
		env.AssertSeqGapless(t)
	}
	require.Empty(t, env.TmpFiles())
}

// TestRevert_Content: what the files hold, as git would have it: CRLF
// files under eol=crlf stay CRLF and merge by lines; a last line with no
// newline comes back without one; a link's target and a mode go back; a
// person's edit of the turn's lines is refused, and under markers the
// file is what git merge-file writes for the same three files; paths
// with spaces and non-ASCII letters, in the -- paths form.
func TestRevert_Content(t *testing.T) {
	t.Parallel()
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	t.Run("crlf", func(t *testing.T) {
		t.Parallel()
		env := revertBase(t, map[string]string{".gitattributes": "*.txt text=auto eol=crlf\n",
			"w.txt": crlf(revLines(24, nil))})
		env.Turn("a1", func() { env.Write("w.txt", crlf(revLines(24, map[int]string{3: "t1"}))) })
		env.Turn("a1", func() { env.Write("w.txt", crlf(revLines(24, map[int]string{3: "t1", 20: "t2"}))) })
		env.revert("--revert=t1")
		require.Equal(t, crlf(revLines(24, map[int]string{20: "t2"})), env.Read("w.txt"))
		// git sees the one line t2 changed, not a file of changed endings.
		require.Equal(t, "1\t1\tw.txt", env.Git("diff", "--numstat", "HEAD", "--", "w.txt"))
		env.Rollback("--undo", "--restore=files")
		require.Equal(t, crlf(revLines(24, map[int]string{3: "t1", 20: "t2"})), env.Read("w.txt"))
	})
	t.Run("no trailing newline", func(t *testing.T) {
		t.Parallel()
		base := strings.TrimSuffix(revLines(12, nil), "\n")
		env := revertBase(t, map[string]string{"n.txt": base})
		env.Turn("a1", func() { env.Write("n.txt", strings.Replace(base, "line 12", "t1 line 12\n", 1)) })
		env.Turn("a1", func() {
			env.Write("n.txt", strings.Replace(strings.Replace(base, "line 12", "t1 line 12\n", 1), "line 1\n", "t2\n", 1))
		})
		env.revert("--revert=t1")
		require.Equal(t, strings.Replace(base, "line 1\n", "t2\n", 1), env.Read("n.txt"))
	})
	t.Run("link and mode", func(t *testing.T) {
		t.Parallel()
		env := NewEnv(t)
		env.Write("x.sh", "echo x\n")
		require.NoError(t, os.Symlink("x.sh", env.Path("l")))
		require.NoError(t, os.Symlink("x.sh", env.Path("l2")))
		env.Commit("links")
		env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
		env.Turn("a1", func() {
			env.Remove("l")
			require.NoError(t, os.Symlink("elsewhere", env.Path("l")))
			env.Remove("l2")
			require.NoError(t, os.Symlink("t1", env.Path("l2")))
			require.NoError(t, os.Chmod(env.Path("x.sh"), 0o755))
		})
		env.Turn("a1", func() {
			env.Remove("l2")
			require.NoError(t, os.Symlink("t2", env.Path("l2")))
		})
		dry := env.revertDry("--revert=t1", "--conflicts=markers")
		require.Equal(t, map[string]string{"l": "modify:reverted", "l2": "left:conflict", "x.sh": "modify:reverted"},
			dry.classes())
		env.revert("--revert=t1", "--conflicts=markers")
		got, err := os.Readlink(env.Path("l"))
		require.NoError(t, err)
		require.Equal(t, "x.sh", got)
		got, err = os.Readlink(env.Path("l2"))
		require.NoError(t, err)
		require.Equal(t, "t2", got, "a later turn's link stays")
		require.Empty(t, env.Git("status", "--porcelain", "--", "l", "x.sh"), "plain git: as HEAD")
	})
	t.Run("a person's edit of the same lines", func(t *testing.T) {
		t.Parallel()
		env := revertRepo(t)
		ours := revLines(30, map[int]string{3: "t1 wrote line 3", 15: "a person rewrote line 15",
			27: "t3 wrote line 27"})
		env.Write("f.txt", ours)
		r := env.Venom("rollback", "--revert=t2", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
		c := refusedConflicts(t, r)[0]
		require.Equal(t, "person", c["by"])
		require.Equal(t, ours, env.Read("f.txt"), "refused: nothing written")
		res := env.revert("--revert=t2", "--conflicts=markers")
		want := mergeFile(t, env, ours, revLines(30, map[int]string{3: "t1 wrote line 3", 15: "t2 wrote line 15"}),
			revLines(30, map[int]string{3: "t1 wrote line 3"}), res.Revert.From, res.Revert.To, "t2")
		require.Equal(t, 1, want.Code, want.Stderr)
		require.Equal(t, want.Stdout, env.Read("f.txt"))
	})
	t.Run("file and folder swapped", func(t *testing.T) {
		t.Parallel()
		env := revertBase(t, map[string]string{"p": "p is a file\n", "q/r.txt": "q is a folder\n"})
		env.Turn("a1", func() {
			env.Remove("p")
			env.Write("p/inside.txt", "p is a folder now\n")
			env.Remove("q")
			env.Write("q", "q is a file now\n")
		})
		env.Turn("a1", func() { env.Write("other.txt", "t2\n") })
		env.revert("--revert=t1")
		require.Equal(t, "p is a file\n", env.Read("p"))
		require.Equal(t, "q is a folder\n", env.Read("q/r.txt"))
		require.Equal(t, "t2\n", env.Read("other.txt"))
		require.Equal(t, "?? other.txt\x00", env.GitRaw("status", "--porcelain=v1", "-z").Stdout)
		env.Rollback("--undo", "--restore=files")
		require.Equal(t, "p is a folder now\n", env.Read("p/inside.txt"))
		require.Equal(t, "q is a file now\n", env.Read("q"))
	})
	t.Run("the turn's folder changed since", func(t *testing.T) {
		t.Parallel()
		// A later turn's file in the folder the turn made: the file the
		// turn deleted cannot come back without it, a conflict.
		env := revertBase(t, map[string]string{"p": "p is a file\n"})
		env.Turn("a1", func() {
			env.Remove("p")
			env.Write("p/inside.txt", "p is a folder now\n")
		})
		env.Turn("a1", func() { env.Write("p/later.txt", "t2\n") })
		r := env.Venom("rollback", "--revert=t1", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
		c := refusedConflicts(t, r)[0]
		require.Equal(t, "p", c["path"])
		env.revert("--revert=t1", "--conflicts=markers")
		require.Equal(t, "t2\n", env.Read("p/later.txt"))
	})
	t.Run("a later turn's rename", func(t *testing.T) {
		t.Parallel()
		// The merge goes path by path, without git's rename detection: a
		// file a later turn renamed is deleted at the turn's path, a
		// whole-file conflict, refused and named; nothing is lost.
		env := revertRepo(t)
		env.Turn("a1", func() {
			env.Write("g.txt", env.Read("f.txt"))
			env.Remove("f.txt")
		})
		tree := env.RecipeTree()
		r := env.Venom("rollback", "--revert=t2", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
		c := refusedConflicts(t, r)[0]
		require.Equal(t, "f.txt", c["path"])
		require.Equal(t, []any{"t3", "t4"}, c["turns"], "the later turns that changed f.txt")
		require.Equal(t, "deleted since the turn", c["detail"])
		dry := env.revertDry("--revert=t2", "--conflicts=markers")
		require.Equal(t, map[string]string{"f.txt": "left:conflict"}, dry.classes())
		// Nothing to write: the conflict stays one, as at a terminal.
		env.Venom("rollback", "--revert=t2", "--conflicts=markers", "--plan="+dry.Plan, "--json").
			Fails(t, 5, "conflict.revert_conflicts")
		require.Equal(t, tree, env.RecipeTree(), "nothing to write: the tree is as it was")
	})
	t.Run("spaces and unicode, -- paths", func(t *testing.T) {
		t.Parallel()
		a, b := "dir with space/naïve file.txt", "日本/ファイル.txt"
		env := revertBase(t, map[string]string{a: "a\n", b: "b\n"})
		env.Turn("a1", func() {
			env.Write(a, "a from t1\n")
			env.Write(b, "b from t1\n")
			env.Write("new dir/ü.txt", "made by t1\n")
		})
		var dry, res RevertResult
		env.Venom("rollback", "--revert=t1", "--dry-run", "--json", "--", a, "new dir").OK(t).JSON(t, &dry)
		require.Equal(t, map[string]string{a: "modify:reverted", "new dir/ü.txt": "delete:reverted"}, dry.classes())
		env.Venom("rollback", "--revert=t1", "--plan="+dry.Plan, "--json", "--", a, "new dir").OK(t).JSON(t, &res)
		require.True(t, *res.Exact)
		require.Equal(t, "a\n", env.Read(a))
		require.Equal(t, "b from t1\n", env.Read(b))
		require.NoFileExists(t, env.Path("new dir/ü.txt"))
		// Plain git: only b differs from HEAD, and nothing is untracked.
		require.Equal(t, " M "+b+"\x00", env.GitRaw("status", "--porcelain=v1", "-z").Stdout)
	})
}

// TestRevert_BesideAGcLoop: git gc --prune=now and git repack -a -d run
// in a loop while dry runs, reverts of merged files and their undos run:
// each revert writes the merged files, each undo gives S back, and git
// fsck is clean at the end.
func TestRevert_BesideAGcLoop(t *testing.T) {
	t.Parallel()
	env, _ := rewrittenRepo(t)
	// Binaries: a command holds its pack against the gc until its ref is
	// made, and in this process another world's command lets go of every
	// hold of the process (packset.Release).
	env.Binary = true
	setUp := env.here
	edits := map[int]string{3: "t1 wrote line 3", 15: "t4 rewrote line 15", 27: "t3 wrote line 27",
		29: "a person wrote line 29"}
	env.Write("f.txt", revLines(30, edits))
	s := env.RecipeTree()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			// A gc that finds another running fails; the next one runs.
			_ = env.GitRaw("gc", "--prune=now", "--quiet")
			_ = env.GitRaw("repack", "-a", "-d", "-q")
			n++
		}
	}()
	for i := 0; i < 3; i++ {
		env.revertDry("--revert=t1")
		env.revert("--revert=t1")
		want := map[int]string{15: "t4 rewrote line 15", 27: "t3 wrote line 27", 29: "a person wrote line 29"}
		require.Equal(t, revLines(30, want), env.Read("f.txt"), "round %d", i)
		env.Rollback("--undo", "--restore=files")
		require.Equal(t, s, env.RecipeTree(), "round %d: the undo did not give S back", i)
	}
	close(stop)
	t.Logf("%d gc rounds", <-done)
	f := env.GitRaw("fsck", "--no-dangling", "--no-progress")
	require.Equal(t, 0, f.Code, "git fsck:\n%s%s", f.Stdout, f.Stderr)
	require.Equal(t, setUp, env.here, "commands that ran in the test's process")
}
