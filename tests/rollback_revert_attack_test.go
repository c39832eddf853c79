package tests

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// resumePaused lets a command paused with VENOM_TEST_PAUSE_RESUME=1 go
// on and waits for its end.
func resumePaused(t *testing.T, env *Env, p *paused) Result {
	t.Helper()
	require.NoError(t, os.Remove(p.file))
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the command did not end:\n%s%s", p.out, p.errb)
	}
	return Result{Args: p.cmd.Args, Stdout: p.out.String(), Stderr: p.errb.String(), Code: p.cmd.ProcessState.ExitCode()}
}

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
			r := resumePaused(t, env, p)
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
