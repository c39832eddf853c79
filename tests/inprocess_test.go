//go:build venomtest

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ageRE = regexp.MustCompile(`\b\d+[smhd]\b *`)

// clockRE is a time a person reads (blame's), whose minute differs
// between twin worlds run one after the other on a busy machine.
var clockRE = regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d\b`)

// madeRE is a linked worktree's folder as the log records it, which
// differs between twin worlds.
var madeRE = regexp.MustCompile(`"made":"[^"]*"`)

// TestInProcess_SameAsTheBinary runs one session twice, on twin worlds:
// each command in this process, and each as the built binary through git.
// Every command's exit code, stdout and stderr, and what git then shows of
// the repository, its linked worktree, its remote and the log, are the
// same: every verb but hook, from subfolders and a worktree, with GIT_DIR,
// TMPDIR, colour, stdin, errors and hints.
func TestInProcess_SameAsTheBinary(t *testing.T) {
	t.Parallel()
	calls := 0
	session := func(env *Env) []string {
		var got []string
		calls = 0
		// A list's ages count from the clock on the wall, and set its
		// columns' width.
		norm := func(s string) string {
			return clockRE.ReplaceAllString(ageRE.ReplaceAllString(env.Normalize(s), "<age> "), "<clock>")
		}
		run := func(dir string, extra []string, stdin string, cmd string, args ...string) {
			env.Tick()
			calls++
			var r Result
			if stdin != "" {
				r = env.VenomInput(stdin, cmd, args...)
			} else {
				r = env.VenomIn(dir, extra, cmd, args...)
			}
			got = append(got, fmt.Sprintf("$ (in %s) %s git venom-%s %s\nexit %d\nstdout:\n%s\nstderr:\n%s",
				norm(dir), norm(strings.Join(extra, " ")), cmd, strings.Join(args, " "), r.Code, norm(r.Stdout), norm(r.Stderr)))
		}
		venom := func(cmd string, args ...string) { run(env.Dir, nil, "", cmd, args...) }
		// rollback runs the dry run, then the real call with its plan.
		rollback := func(dir string, args ...string) {
			r := env.VenomIn(dir, nil, "rollback", append(args, "--dry-run", "--json")...)
			calls++
			var plan struct{ Plan string }
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &plan), r.Stdout)
			run(dir, nil, "", "rollback", append(args, "--plan="+plan.Plan)...)
		}
		venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json")
		env.Write("a.txt", "one\n")
		env.Write("dir/b.txt", "two\n")
		env.Remove("README.md")
		venom("checkpoint", "--agent=a1", "--reason=turn_end")
		venom("checkpoint", "--agent=a1", "--label=again", "--json")
		venom("checkpoint", "list", "--agent=a1")
		venom("checkpoint", "list", "--json")
		venom("checkpoint", "agents")
		venom("diff", "--agent=a1", "--from=k1")
		venom("diff", "--agent=a1", "--from=k1", "--to=k2", "--json")
		venom("rollback", "--agent=a1", "--checkpoint=k1", "--dry-run")
		venom("rollback", "--agent=a1", "--checkpoint=k99", "--dry-run", "--json")
		venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=bogus", "--dry-run")
		rollback(env.Dir, "--agent=a1", "--checkpoint=k1")
		venom("checkpoint", "events", "--json")
		venom("checkpoint", "doctor")
		venom("checkpoint", "--agent=Bad!")
		venom("checkpoint", "nosuchverb")

		// From a subfolder, with paths relative to it.
		sub := env.Path("dir")
		env.Write("dir/c.txt", "three\n")
		run(sub, nil, "", "checkpoint", "--agent=a1", "--reason=turn_start")
		env.Write("dir/c.txt", "four\n")
		env.Write("dir/d.txt", "five\n")
		run(sub, nil, "", "checkpoint", "--agent=a1", "--reason=turn_end", "--json")
		run(sub, nil, "", "diff", "--agent=a1", "--from=last~1", "--path=c.txt")
		run(sub, nil, "", "diff", "--agent=a1", "--blame=c.txt")
		run(sub, nil, "", "rollback", "--agent=a1", "--checkpoint=last~1", "--path=c.txt", "--dry-run")
		run(sub, nil, "", "rollback", "--agent=a1", "--revert=t2", "--dry-run", "--json")
		// The dry run's index goes in the command's TMPDIR.
		run(env.Dir, []string{"TMPDIR=" + filepath.Join(env.Root, "missing")}, "", "rollback", "--agent=a1",
			"--checkpoint=k1", "--dry-run")
		rollback(sub, "--agent=a1", "--checkpoint=last~1", "--path=c.txt")
		rollback(env.Dir, "--agent=a1", "--undo")
		// Colour, asked for and refused; an error's hints.
		venom("checkpoint", "list", "--agent=a1", "--color=always")
		venom("diff", "--agent=a1", "--from=k1", "--color=always")
		venom("rollback", "--agent=a1", "--checkpoint=k99", "--color=always")
		run(env.Dir, []string{"NO_COLOR=1"}, "", "diff", "--agent=a1", "--from=k1", "--color=auto")
		// git's variables naming the repository; standard input.
		run(env.Dir, []string{"GIT_DIR=" + env.Path(".git"), "GIT_WORK_TREE=" + env.Dir}, "",
			"checkpoint", "list", "--agent=a1")
		run(env.Dir, []string{"GIT_DIR=" + env.Path(".git")}, "", "checkpoint", "list", "--agent=a1")
		run(env.Dir, nil, "not read\n", "checkpoint", "--agent=a1", "--label=stdin")
		// A linked worktree and its own agent.
		wt := filepath.Join(env.Root, "wt")
		env.Git("worktree", "add", "-q", "-b", "side", wt)
		run(wt, nil, "", "checkpoint", "--agent=b1", "--json")
		require.NoError(t, os.WriteFile(filepath.Join(wt, "side.txt"), []byte("side\n"), 0o644))
		run(wt, nil, "", "checkpoint", "--agent=b1")
		run(wt, nil, "", "diff", "--agent=b1", "--from=k1", "--stat")
		rollback(wt, "--agent=b1", "--checkpoint=k1")
		run(wt, nil, "", "checkpoint", "list")
		venom("checkpoint", "agents", "--json")
		// Forks, retention, archive, explain, sharing.
		venom("checkpoint", "fork", "--agent=a2", "--from=a1", "--json")
		venom("checkpoint", "prune", "--keep=1", "--dry-run")
		venom("checkpoint", "prune", "--keep=1", "--json")
		venom("checkpoint", "clean", "--agent=a2", "--dry-run")
		venom("checkpoint", "clean", "--agent=a2", "--json")
		env.Git("add", "-A")
		env.Git("commit", "-q", "-m", "work")
		venom("checkpoint", "explain", "HEAD")
		venom("checkpoint", "explain", "HEAD~1..HEAD", "--json")
		env.Git("init", "-q", "--bare", filepath.Join(env.Root, "remote.git"))
		env.Git("remote", "add", "origin", filepath.Join(env.Root, "remote.git"))
		venom("checkpoint", "push", "--agent=a1")
		venom("checkpoint", "fetch", "--json")
		venom("checkpoint", "events")
		venom("checkpoint", "doctor", "--json")

		log, err := os.ReadFile(filepath.Join(env.StateDir(), "log.jsonl"))
		require.NoError(t, err)
		return append(got, env.Normalize(env.Git("for-each-ref", "--format=%(refname) %(objectname) %(tree)")),
			env.Normalize(env.Git("status", "--porcelain=v1")),
			env.Normalize(env.Git("-C", wt, "status", "--porcelain=v1")),
			env.Normalize(env.Git("--git-dir="+filepath.Join(env.Root, "remote.git"), "for-each-ref")),
			madeRE.ReplaceAllString(norm(string(log)), `"made":"<id>"`))
	}
	inProcess, binary := NewEnv(t), NewEnv(t)
	// The binaries as a person runs them: through git's dispatch.
	binary.Binary, binary.Dispatch = true, true
	require.Empty(t, inProcess.binaryOnly(inProcess.Dir, inProcess.Environ(), "checkpoint", nil),
		"the session would not run in this process")
	want, got := session(binary), session(inProcess)
	require.Equal(t, len(want), len(got))
	require.Equal(t, calls, inProcess.here, "commands that ran as binaries")
	for i := range want {
		require.Equal(t, want[i], got[i])
	}
}

// TestInProcess_KnobOfTheCommand: a knob a command reads from its own
// environment runs in this process and holds for that command only,
// beside another world's commands: VENOM_TEST_PACK_THRESHOLD (packs merge
// past 2, not 8), VENOM_TEST_FOLD_RECENT (the fold snapshot keeps two
// captures whole, not all) and VENOM_TEST_FAIL_AT (each capture fails at
// its own first pass of the point, the other world's pass it).
func TestInProcess_KnobOfTheCommand(t *testing.T) {
	t.Parallel()
	low, plain := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2"), newPackWorld(t)
	require.Empty(t, low.binaryOnly(low.Dir, low.Environ(), "checkpoint", nil))
	const n = 5
	for i := 1; i <= n; i++ {
		low.capture(t, i)
		plain.capture(t, i)
	}
	require.Equal(t, n, low.here, "captures that ran in this process")
	require.Equal(t, n, plain.here, "captures that ran in this process")
	assert.LessOrEqual(t, len(low.recorded()), 3, "packs with the knob: %v", low.recorded())
	assert.Len(t, plain.recorded(), n, "packs without it")

	recent, whole := NewEnv(t), NewEnv(t)
	recent.Extra = append(recent.Extra, "VENOM_TEST_FOLD_EVERY=1", "VENOM_TEST_FOLD_RECENT=2")
	whole.Extra = append(whole.Extra, "VENOM_TEST_FOLD_EVERY=1")
	require.Empty(t, recent.binaryOnly(recent.Dir, recent.Environ(), "checkpoint", nil))
	for i := 1; i <= n; i++ {
		for _, e := range []*Env{recent, whole} {
			e.Write("f.txt", fmt.Sprintf("capture %d\n", i))
			e.Take(t, "--agent=a1")
		}
	}
	require.Equal(t, n, recent.here, "captures that ran in this process")
	require.Equal(t, n, whole.here, "captures that ran in this process")
	complete := func(e *Env) int64 {
		b, err := os.ReadFile(filepath.Join(e.StateDir(), "fold.json"))
		require.NoError(t, err)
		lines := strings.SplitN(string(b), "\n", 3)
		require.Len(t, lines, 3, "fold.json: %s", b)
		var all struct {
			Complete map[string]int64 `json:"complete"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[1]), &all))
		require.Len(t, all.Complete, 1, "fold.json: %s", lines[1])
		for _, seq := range all.Complete {
			return seq
		}
		return 0
	}
	assert.Greater(t, complete(recent), complete(whole), "history kept whole with the knob and without")

	// VENOM_TEST_FAIL_AT=capture-scan#1: each capture of its world fails
	// at its own first pass, while another world's captures pass the
	// point at the same time, unharmed and uncounted.
	fails, goes := NewEnv(t), NewEnv(t)
	fails.Extra = append(fails.Extra, "VENOM_TEST_FAIL_AT=capture-scan#1")
	require.Empty(t, fails.binaryOnly(fails.Dir, fails.Environ(), "checkpoint", nil))
	fails.Write("f.txt", "changed\n")
	for i := 1; i <= 2; i++ {
		goes.Write("f.txt", fmt.Sprintf("capture %d\n", i))
		var wg sync.WaitGroup
		var r Result
		wg.Add(1)
		go func() {
			defer wg.Done()
			r = fails.Venom("checkpoint", "--agent=a1", "--json")
		}()
		goes.Venom("checkpoint", "--agent=a1", "--json").OK(t)
		wg.Wait()
		r.Fails(t, 1, "failed.checkpoint_git")
	}
	require.Empty(t, fails.Git("for-each-ref", "refs/venom"))
	require.Equal(t, 2, fails.here, "captures that ran in this process")
	require.Equal(t, 2, goes.here, "captures that ran in this process")
}

// TestInProcess_CommandPointsReadTheContext: no fault point of
// commandPoints is reached through testhook.Point, which reads the
// process's environment; each is named in lib.
func TestInProcess_CommandPointsReadTheContext(t *testing.T) {
	t.Parallel()
	named := map[string]bool{}
	quoted := regexp.MustCompile(`"([a-z][a-z-]+)"`)
	err := filepath.WalkDir(filepath.Join(repoRoot(), "lib"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		for _, line := range strings.Split(string(src), "\n") {
			if _, arg, ok := strings.Cut(line, "testhook.Point("); ok && !strings.HasPrefix(arg, `"`) {
				// A name not written at the call: none of commandPoints.
				assert.Contains(t, []string{"w.opts.InstallPoint)", `point + "-written")`, `point + "-installed")`},
					arg, "%s: %s", p, line)
			}
			for _, m := range quoted.FindAllStringSubmatch(line, -1) {
				named[m[1]] = true
				if commandPoints[m[1]] {
					assert.NotContains(t, line, "testhook.Point(", "%s: %s", p, line)
				}
			}
		}
		return err
	})
	require.NoError(t, err)
	for p := range commandPoints {
		assert.True(t, named[p], "no fault point %s in lib", p)
	}
}

// TestInProcess_FlagEnvironment: the variables flags default from are
// found, and a command given one runs as the binary, which reads it.
func TestInProcess_FlagEnvironment(t *testing.T) {
	t.Parallel()
	require.True(t, flagEnv()["VENOM_AGENT"], "%v", flagEnv())
	env := NewEnv(t)
	require.NotEmpty(t, env.binaryOnly(env.Dir, append(env.Environ(), "VENOM_AGENT=a1"), "checkpoint", nil))
	var res TakeResult
	env.VenomIn(env.Dir, []string{"VENOM_AGENT=a1"}, "checkpoint", "--json").OK(t).JSON(t, &res)
	require.Equal(t, "a1", env.Git("for-each-ref", "--format=%(refname:lstrip=3)", "refs/venom/checkpoints")[:2])
}

// TestInProcess_BackstopEndsOnlyTheCommand: a take that outlives
// venom.timeout by its grace (libgit2 waits on a FIFO planted as a pack
// index) ends with timeout.checkpoint's exit code in this process as the
// binary does, with its holder record cleared and its lock dropped, and
// the test process goes on.
func TestInProcess_BackstopEndsOnlyTheCommand(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("repack", "-adq") // libgit2 finds HEAD's objects in packs only
	idx := env.Path(".git/objects/pack/pack-" + strings.Repeat("ab", 20) + ".idx")
	require.NoError(t, os.MkdirAll(filepath.Dir(idx), 0o755))
	pack := strings.TrimSuffix(idx, ".idx") + ".pack"
	require.NoError(t, os.WriteFile(pack, []byte("PACK"), 0o444))
	require.NoError(t, syscall.Mkfifo(idx, 0o644))
	// git searches packs newest first (by the .pack's mtime, in whole
	// seconds): older than repack's, the FIFO is opened only for an object
	// the real pack lacks, which libgit2 looks up and git's write-tree of
	// HEAD's index does not. Planted in a later second, git opened it
	// first, and the capture's own deadline ended git, not the backstop.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(pack, old, old))
	env.Write("a.txt", "one\n")
	require.Empty(t, env.binaryOnly(env.Dir, env.Environ(), "checkpoint", []string{"--agent=a1"}))

	// The capture must reach the FIFO within venom.timeout: on a machine
	// too busy for that, its own deadline ends it first (exit 7, nothing
	// stuck), which shows nothing here; it is tried again with more time.
	var r Result
	var ended <-chan struct{}
	var start time.Time
	timeout := time.Second
	for {
		env.SetGlobal("venom.timeout", timeout.String())
		start = time.Now()
		r, ended = runInProcess(env.Dir, env.Environ(), "", "checkpoint", []string{"--agent=a1"})
		require.Equal(t, 7, r.Code, "stdout: %s\nstderr: %s", r.Stdout, r.Stderr)
		if !strings.Contains(r.Stderr, "did not end within venom.timeout") || timeout >= 16*time.Second {
			break
		}
		t.Logf("venom.timeout %s ended the capture before it was stuck; trying again", timeout)
		timeout *= 2
	}
	require.Contains(t, r.Stderr, "timeout.checkpoint: the capture passed venom.timeout and did not end; stopped")
	require.GreaterOrEqual(t, time.Since(start), timeout+5*time.Second, "ended before the grace")
	select {
	case <-ended:
		t.Fatal("the capture returned: it was not stuck, nothing to show")
	default:
	}
	t.Cleanup(func() {
		// Let the abandoned capture read an empty index and go.
		if f, err := os.OpenFile(idx, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	// Another world's command in this process takes its lock and ends.
	other := NewEnv(t)
	other.Write("b.txt", "two\n")
	r, _ = runInProcess(other.Dir, other.Environ(), "", "checkpoint", []string{"--agent=a1"})
	r.OK(t)
	holder, err := os.ReadFile(filepath.Join(env.StateDir(), "lock"))
	require.NoError(t, err)
	require.Empty(t, holder, "the holder record was not cleared")

	// The lock is free: a binary takes the checkpoint once the FIFO is gone.
	require.NoError(t, os.Remove(idx))
	env.Binary = true
	env.Venom("checkpoint", "--agent=a1").OK(t)
	require.Len(t, strings.Fields(env.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/")), 1)
}
