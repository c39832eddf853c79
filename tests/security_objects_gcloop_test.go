package tests

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecurity_ObjectsHeldBesideAGCLoop: captures, dry runs and real
// calls beside `git gc --prune=now` and `git repack -a -d` in a loop
// (docs/checkpoints.md#objects-a-command-relies-on): every checkpoint
// whole (fsck), every file a rollback replaced or deleted in its safety
// checkpoint. A command may fail, saying so and changing nothing.
func TestSecurity_ObjectsHeldBesideAGCLoop(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// Binaries: in this process another world's command lets go of every
	// pack hold of the process (packset.Release), this world's too.
	env.Binary = true
	seed := time.Now().UnixNano()
	if s := os.Getenv("VENOM_TEST_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	// Enough history that each repack takes a while: the window between
	// its listing of packs and its deletion of them is what races.
	for i := 0; i < 400; i++ {
		env.Write(fmt.Sprintf("lib/f%03d.txt", i), strings.Repeat(fmt.Sprintf("line %d\n", i), 40))
	}
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)

	stop := make(chan struct{})
	gcDone := make(chan int)
	go func() {
		runs := 0
		for {
			select {
			case <-stop:
				gcDone <- runs
				return
			default:
			}
			args := []string{"-c", "gc.autoDetach=false", "gc", "--prune=now", "--quiet"}
			if runs%2 == 1 {
				args = []string{"repack", "-a", "-d", "-q"}
			}
			c := exec.Command("git", args...)
			c.Dir, c.Env = env.Dir, env.Environ()
			_ = c.Run() // a run that lost a race with another fails alone
			runs++
		}
	}()

	deadline := time.Now().Add(20 * time.Second)
	taken, rollbacks, failed := 1, 0, 0
	for step := 0; time.Now().Before(deadline); step++ {
		for k := 0; k < 3; k++ {
			env.Write(fmt.Sprintf("lib/f%03d.txt", rng.Intn(400)), fmt.Sprintf("edit %d %d\n", step, rng.Int63()))
		}
		env.Write(fmt.Sprintf("new/n%d.txt", step%9), fmt.Sprintf("a person's file %d %d\n", step, rng.Int63()))
		// Every other step a rollback: its dry run, then its real call,
		// is where a safety checkpoint relied on the dry run's pack.
		if step%2 == 0 {
			r := env.Venom("checkpoint", "--agent=a1", "--json")
			require.NotContains(t, r.Stderr, "panic:")
			if r.Code != 0 {
				failed++
				t.Logf("capture: %s%s", r.Stdout, r.Stderr)
				continue
			}
			taken++
			continue
		}
		// A rollback: the dry run, then the real call quoting its plan.
		target := fmt.Sprintf("k%d", 1+rng.Intn(taken))
		args := []string{"--agent=a1", target, "--restore=files", "--outside=overwrite"}
		dry := env.Venom("rollback", append(args, "--dry-run", "--json")...)
		if dry.Code != 0 {
			failed++
			t.Logf("dry run: %s%s", dry.Stdout, dry.Stderr)
			continue
		}
		var plan RollbackResult
		dry.JSON(t, &plan)
		before := map[string]string{}
		for _, f := range plan.Repos[0].Files {
			if b, err := os.ReadFile(env.Path(f.Path)); err == nil {
				before[f.Path] = string(b)
			}
		}
		r := env.Venom("rollback", append(args, "--plan="+plan.Plan, "--json")...)
		require.NotContains(t, r.Stderr, "panic:")
		if r.Code != 0 {
			failed++
			t.Logf("rollback: %s%s", r.Stdout, r.Stderr)
			continue
		}
		var res RollbackResult
		r.JSON(t, &res)
		rollbacks++
		taken += 2
		safety := "refs/venom/checkpoints/a1/" + strings.TrimPrefix(res.Safety, "k")
		for path, was := range before {
			got := env.GitRaw("cat-file", "blob", safety+":"+path)
			require.Equal(t, 0, got.Code, "%s: the rollback replaced or deleted %s and its safety checkpoint %s lacks it: %s",
				target, path, res.Safety, got.Stderr)
			require.Equal(t, was, got.Stdout, "%s in %s", path, res.Safety)
		}
	}
	close(stop)
	runs := <-gcDone
	t.Logf("%d checkpoints, %d rollbacks, %d commands failed, %d gc/repack runs", taken, rollbacks, failed, runs)
	fsckWhole(t, env)
	require.Zero(t, env.here, "commands that ran in the test's process")
	// Every checkpoint the log records and its ref holds is readable whole.
	for _, ref := range env.VenomRefs() {
		name, _, _ := strings.Cut(ref, "=")
		out := env.GitRaw("ls-tree", "-r", name)
		assert.Equal(t, 0, out.Code, "%s: %s", name, out.Stderr)
	}
	assert.Greater(t, rollbacks, 0)
}
