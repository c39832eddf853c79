package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The crash campaign (crash_*_test.go): commands killed with SIGKILL after
// a random delay, not only at the named pause points, run beside the
// user's own git commands, and on a full disk. After each, plain git and
// the journal's bytes say whether anything the docs promise was broken.

// crashRand is a test's seeded source of kill delays: VENOM_TEST_SEED
// replays a run, and the seed is logged so a failure can be replayed.
// tries is how many kills a test makes (more under VENOM_TEST_LONG).
func crashRand(t *testing.T, short int) (r *rand.Rand, tries int) {
	t.Helper()
	seed, long := randomSeed(time.Now().UnixNano())
	t.Logf("seed %d (VENOM_TEST_SEED=%d replays it)", seed, seed)
	tries = short
	if long {
		tries = short * 8
	}
	return rand.New(rand.NewSource(seed)), tries
}

// killed is one command killed after a delay, or finished before it.
type killed struct {
	after    time.Duration
	finished bool // it ended by itself before the kill
	res      Result
}

// runKilled starts a venom command in a process group of its own (git runs
// git-venom-* as its child, which runs git children in turn), kills the
// whole group with SIGKILL after d, and waits until every process of the
// group is gone.
func (e *Env) runKilled(t *testing.T, d time.Duration, extra []string, cmd string, args ...string) killed {
	t.Helper()
	res, finished := signalGroup(t, e.Command(extra, cmd, args...), d, syscall.SIGKILL)
	if finished {
		require.NotContains(t, res.Stderr, "panic:", "%s", res.Stderr)
	}
	return killed{after: d, finished: finished, res: res}
}

// signalGroup starts c in a process group of its own, sends the whole
// group sig after d unless c ended first (finished), and waits until
// every process of the group is gone.
func signalGroup(t *testing.T, c *exec.Cmd, d time.Duration, sig syscall.Signal) (res Result, finished bool) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, c.Start())
	pgid := c.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
		finished = true
	case <-time.After(d):
		_ = syscall.Kill(-pgid, sig)
		<-done
	}
	// The group's other members (git's children) die with it: wait for them.
	for i := 0; i < 500 && syscall.Kill(-pgid, 0) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	require.Error(t, syscall.Kill(-pgid, 0), "a process of the signalled command is still running")
	return Result{Args: c.Args, Stdout: out.String(), Stderr: errb.String(), Code: c.ProcessState.ExitCode()}, finished
}

// timed runs a venom command to its end and returns how long it took.
func (e *Env) timed(t *testing.T, extra []string, cmd string, args ...string) (Result, time.Duration) {
	t.Helper()
	t0 := time.Now()
	r := e.VenomIn(e.Dir, extra, cmd, args...)
	return r, time.Since(t0)
}

// delay picks a kill delay in [0, span), spread evenly over the tries so a
// short run still kills early, midway and late, with random jitter.
func delay(r *rand.Rand, try, tries int, span time.Duration) time.Duration {
	slot := span / time.Duration(tries)
	return time.Duration(try)*slot + time.Duration(r.Int63n(int64(slot)+1))
}

// doctorChecks runs doctor --json and maps each check's id to its status.
func (e *Env) doctorChecks(t *testing.T) map[string]string {
	t.Helper()
	r := e.Venom("checkpoint", "doctor", "--json")
	require.NotContains(t, r.Stderr, "panic:")
	var d struct {
		OK     bool `json:"ok"`
		Checks []struct {
			ID      string `json:"id"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"checks"`
	}
	r.JSON(t, &d)
	m := map[string]string{}
	for _, c := range d.Checks {
		m[c.ID] = c.Status
		if c.Status != "ok" {
			t.Logf("doctor: %s %s: %s", c.ID, c.Status, c.Message)
		}
	}
	return m
}

// journal reads log.jsonl as bytes and reports its whole records and
// whether it ends in a torn line (what a kill mid-write may leave, and the
// only damage one may leave: docs/checkpoints.md#the-log).
func (e *Env) journal(t *testing.T) (recs []map[string]any, torn bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.StateDir(), "log.jsonl"))
	if os.IsNotExist(err) {
		return nil, false
	}
	require.NoError(t, err)
	lines := bytes.Split(b, []byte("\n"))
	last := lines[len(lines)-1]
	lines = lines[:len(lines)-1]
	torn = len(last) > 0
	for i, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m), "line %d is not a record: %q", i+1, l)
		require.Equal(t, float64(i+1), m["seq"], "line %d: seq has a gap", i+1)
		recs = append(recs, m)
	}
	return recs, torn
}

// assertCrashLeftovers checks what a kill may leave against what doctor
// says, and that nothing worse is left: the lock free, the journal whole
// but for a torn tail, every object a ref needs present (git fsck), every
// checkpoint ref either logged with its commit or an unlogged one at the
// next free number (which the next capture adopts), doctor failing
// exactly when a rollback began and never ended.
func (e *Env) assertCrashLeftovers(t *testing.T) {
	t.Helper()
	require.True(t, lockFree(e), "the killed command's lock is still held")
	recs, torn := e.journal(t)
	r := e.GitRaw("fsck", "--no-dangling", "--no-progress")
	require.Equal(t, 0, r.Code, "git fsck after the kill:\n%s%s", r.Stdout, r.Stderr)

	logged := map[string]string{}
	open := map[string]bool{}
	for _, rec := range recs {
		switch rec["type"] {
		case "checkpoint.taken":
			n := strings.TrimPrefix(rec["checkpoint"].(string), "k")
			logged[fmt.Sprintf("refs/venom/checkpoints/%s/%s", rec["agent"], n)] =
				rec["repos"].([]any)[0].(map[string]any)["commit"].(string)
		case "checkpoint.pruned":
			// Pruned refs are gone; their names are never reused.
		case "rollback.started":
			open[rec["agent"].(string)] = true
		case "rollback.ended":
			delete(open, rec["agent"].(string))
		}
	}
	orphans := 0
	for _, r := range e.listRefs("refs/venom/checkpoints") {
		name, oid := r.name, r.oid
		if want, ok := logged[name]; ok {
			require.Equal(t, want, oid, "%s moved", name)
			continue
		}
		orphans++
		require.Equal(t, 1, orphans, "more than one ref no record names: %s", name)
	}

	checks := e.doctorChecks(t)
	if torn {
		require.Equal(t, "warn", checks["state.log"], "doctor is silent about the torn tail")
	} else {
		require.Equal(t, "ok", checks["state.log"])
	}
	if len(open) > 0 {
		require.Equal(t, "fail", checks["state.rollback"], "doctor is silent about the interrupted rollback")
	} else {
		require.Equal(t, "ok", checks["state.rollback"])
	}
	if orphans > 0 {
		require.Equal(t, "warn", checks["checkpoints.refs"], "doctor is silent about the ref no record names")
	}
	require.NotEqual(t, "fail", checks["state.lock"])
}

// worktreeFiles lists every path under dir but .git, with its content
// ("<dir>" for a folder), so a leftover staging file or half-written
// file shows.
func worktreeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		if fi.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	}))
	return out
}

// sortedKeys is m's keys, sorted.
func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
