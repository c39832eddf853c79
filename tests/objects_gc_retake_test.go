package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigFile is past the capture's in-memory bound: git hash-object -w
// stores it, loose, and nothing holds it until the checkpoint's pack.
func bigFile(tag string) string {
	return strings.Repeat("a big file, stored loose by git: "+tag+"\n", 5<<20/40+1)
}

// statCases are a person's files as the caches a capture goes through
// (the private index's memo, its listing, the quick scan's record) see
// them: written just before, so every capture reads them again, or far
// enough before that their stat data vouches for the object ids the
// caches hold, gc deleted or not (VENOM_TEST_RACY_MS: 50 ms instead of
// the second or two a busy machine takes between the write and the
// capture).
var statCases = []struct {
	name  string
	extra []string
}{
	{"files read again", nil},
	{"files trusted by their stat data", []string{"VENOM_TEST_RACY_MS=50"}},
}

// pastRacy lets the shortened racy window pass: what was written before
// is trusted by the commands of statCases' second case.
func pastRacy() { time.Sleep(60 * time.Millisecond) }

// TestObjects_GcPruneNowUnderACapture: a person's git gc --prune=now and
// git repack -a -d run while a capture writes its commit, after git
// stored a big file loose and the capture found a new file stored by a
// dry run's pack: both are unreachable and deleted. The capture takes
// its files again, stores them anew, and succeeds with a whole
// checkpoint of them: also when its caches held their ids, which a
// capture taken again through them named again, failing each time.
func TestObjects_GcPruneNowUnderACapture(t *testing.T) {
	t.Parallel()
	for _, c := range statCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
			env.Write("precious.txt", "a person's new work, in no checkpoint\n")
			big := bigFile("capture")
			env.Write("big.txt", big)
			env.DryRun("--agent=a1", "k1", "--restore=files")
			pastRacy()

			p := env.pause("commit-write#1", append([]string{"VENOM_TEST_PAUSE_RESUME=1"}, c.extra...),
				"checkpoint", "--agent=a1", "--json")
			gcNow(env)
			var res TakeResult
			p.resume(t).OK(t).JSON(t, &res)
			require.Equal(t, "k2", *res.Checkpoint)
			fsckWhole(t, env)
			assert.Equal(t, "a person's new work, in no checkpoint\n", env.GitRaw("show", "refs/venom/checkpoints/a1/2:precious.txt").Stdout)
			assert.Equal(t, big, env.GitRaw("show", "refs/venom/checkpoints/a1/2:big.txt").Stdout)

			// The next capture, through the caches made again, is whole too.
			env.Write("precious.txt", "more of it\n")
			pastRacy()
			var next TakeResult
			env.VenomIn(env.Dir, c.extra, "checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &next)
			require.Equal(t, "k3", *next.Checkpoint)
			fsckWhole(t, env)
			assert.Equal(t, big, env.GitRaw("show", "refs/venom/checkpoints/a1/3:big.txt").Stdout)
		})
	}
}

// TestObjects_GcPruneNowUnderARollbacksCapture: the same gc while a real
// call records its rollback capture, which holds a big file a person
// wrote once the files were placed: the rollback takes its capture again
// and ends well, not undone, its rollback checkpoint whole.
func TestObjects_GcPruneNowUnderARollbacksCapture(t *testing.T) {
	t.Parallel()
	for _, c := range statCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
			env.Write("README.md", "an edit the rollback takes back\n")
			args := []string{"--agent=a1", "k1", "--restore=files", "--outside=overwrite"}
			plan := env.DryRun(args...).Plan

			// Paused where the files are placed, then where the rollback
			// capture's commit is written (the safety checkpoint's is the first).
			p := env.pause("rollback-files-placed,commit-write#2", append([]string{"VENOM_TEST_PAUSE_RESUME=1"}, c.extra...),
				"rollback", append(args, "--plan="+plan, "--json")...)
			big := bigFile("rollback")
			env.Write("late.txt", big)
			pastRacy()
			p.next(t, "its capture's commit")
			gcNow(env)
			var res RollbackResult
			p.resume(t).OK(t).JSON(t, &res)
			fsckWhole(t, env)
			after := "refs/venom/checkpoints/a1/3"
			assert.Equal(t, big, env.GitRaw("show", after+":late.txt").Stdout)
			assert.Equal(t, env.Git("show", "refs/venom/checkpoints/a1/1:README.md"), env.Git("show", after+":README.md"))
		})
	}
}
