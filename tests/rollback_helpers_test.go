package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RollbackResult is agent.rollback's result, as the tests read it.
type RollbackResult struct {
	Agent        string `json:"agent"`
	Checkpoint   string `json:"checkpoint"`
	DryRun       bool   `json:"dry_run"`
	Plan         string `json:"plan"`
	Restore      string `json:"restore"`
	Guarded      *bool  `json:"guarded"`
	Safety       string `json:"safety"`
	After        string `json:"after"`
	Exact        *bool  `json:"exact"`
	Conversation struct {
		Rewinds     bool     `json:"rewinds"`
		ThroughTurn *string  `json:"through_turn"`
		Drops       []string `json:"drops"`
	} `json:"conversation"`
	SharedWith []string `json:"shared_with"`
	Children   []string `json:"children"`
	Repos      []struct {
		Repo string `json:"repo"`
		Path string `json:"path"`
		Head struct {
			Moves   bool    `json:"moves"`
			Forward bool    `json:"forward"`
			From    *string `json:"from"`
			To      *string `json:"to"`
			Commits int     `json:"commits"`
		} `json:"head"`
		Files []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
			Class  string `json:"class"`
		} `json:"files"`
		Left []struct {
			Path   string  `json:"path"`
			Reason string  `json:"reason"`
			Detail *string `json:"detail"`
		} `json:"left"`
		IgnoredEdits []string `json:"ignored_edits"`
	} `json:"repos"`
}

// Classes maps each restored path to its class.
func (r RollbackResult) Classes() map[string]string {
	m := map[string]string{}
	for _, f := range r.Repos[0].Files {
		m[f.Path] = f.Class
	}
	return m
}

// LeftReasons maps each path left alone to its reason.
func (r RollbackResult) LeftReasons() map[string]string {
	m := map[string]string{}
	for _, l := range r.Repos[0].Left {
		m[l.Path] = l.Reason
	}
	return m
}

// rollbackJSON runs git venom-rollback with args, then extra and --json,
// expecting success, and decodes what it prints as a T.
func rollbackJSON[T any](e *Env, args []string, extra ...string) T {
	e.t.Helper()
	var res T
	e.Venom("rollback", append(append(append([]string{}, args...), extra...), "--json")...).OK(e.t).JSON(e.t, &res)
	return res
}

// DryRun runs a rollback dry run and decodes it.
func (e *Env) DryRun(args ...string) RollbackResult {
	e.t.Helper()
	res := rollbackJSON[RollbackResult](e, args, "--dry-run")
	require.True(e.t, res.DryRun)
	require.True(e.t, strings.HasPrefix(res.Plan, "p1-") && len(res.Plan) == 19, res.Plan)
	return res
}

// Rollback runs the dry run, then the real call quoting its plan.
func (e *Env) Rollback(args ...string) RollbackResult {
	e.t.Helper()
	plan := e.DryRun(args...).Plan
	res := rollbackJSON[RollbackResult](e, args, "--plan="+plan)
	require.False(e.t, res.DryRun)
	return res
}

// RollbackFails runs the real call with a fresh plan and expects a failure.
func (e *Env) RollbackFails(extra []string, exit int, code string, args ...string) Result {
	e.t.Helper()
	plan := e.DryRun(args...).Plan
	r := e.VenomIn(e.Dir, extra, "rollback", append(append([]string{}, args...), "--plan="+plan, "--json")...)
	return r.Fails(e.t, exit, code)
}

// Turn runs one turn of an agent: turn_start, the work, turn_end.
func (e *Env) Turn(agent string, work func(), extra ...string) {
	e.t.Helper()
	e.Venom("checkpoint", append([]string{"--agent=" + agent, "--reason=turn_start", "--json"}, extra...)...).OK(e.t)
	work()
	e.Venom("checkpoint", "--agent="+agent, "--reason=turn_end", "--json").OK(e.t)
}

// AppendLog appends a record to the journal the way the suite would, for
// records no command of this suite writes yet (edits, prunes, archiving).
func (e *Env) AppendLog(typ string, members map[string]any) {
	e.t.Helper()
	recs := e.LogRecords()
	seq := 0
	if len(recs) > 0 {
		seq = int(recs[len(recs)-1]["seq"].(float64))
	}
	m := map[string]any{"seq": seq + 1, "ts": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "type": typ}
	for k, v := range members {
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(e.t, err)
	common := e.CommonDir()
	f, err := os.OpenFile(filepath.Join(common, "venom", "log.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(e.t, err)
	_, err = f.Write(append(b, '\n'))
	require.NoError(e.t, err)
	require.NoError(e.t, f.Close())
}

// CheckpointTreeOf is the tree of a checkpoint id like k3.
func (e *Env) CheckpointTreeOf(agent, id string) string {
	e.t.Helper()
	var n int
	_, err := fmt.Sscanf(id, "k%d", &n)
	require.NoError(e.t, err)
	return e.CheckpointTree(agent, n)
}

// IndexHash is the sha256 of the user's index file.
func (e *Env) IndexHash() string {
	e.t.Helper()
	_, _, idx := e.gitDirs()
	return fileHash(idx)
}

// Records returns the journal's records of one type.
func (e *Env) Records(typ string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, r := range e.LogRecords() {
		if r["type"] == typ {
			out = append(out, r)
		}
	}
	return out
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// StartPaused starts a venom command that stops at a testhook point, and
// returns once it is there. The test kills it (kill -9) or lets cleanup do so.
func (e *Env) StartPaused(point string, extra []string, cmd string, args ...string) *exec.Cmd {
	e.t.Helper()
	return e.pause(point, extra, cmd, args...).cmd
}

// paused is a venom command stopped at a testhook point.
type paused struct {
	cmd       *exec.Cmd
	file      string // the pause file, written when the point is reached
	done      chan struct{}
	out, errb *bytes.Buffer
}

// pause starts a venom command with VENOM_TEST_PAUSE_AT=point (and extra)
// in a process group of its own, killed at cleanup, and returns once the
// command has reached the point.
func (e *Env) pause(point string, extra []string, cmd string, args ...string) *paused {
	e.t.Helper()
	return e.pauseCmd(point, extra, func(env []string) *exec.Cmd { return e.Command(env, cmd, args...) })
}

// pauseCmd is pause for the command mk makes with the environment it is
// given.
func (e *Env) pauseCmd(point string, extra []string, mk func(env []string) *exec.Cmd) *paused {
	e.t.Helper()
	p := &paused{file: filepath.Join(e.Root, fmt.Sprintf("paused-%s-%d", strings.ReplaceAll(point, "#", "-"),
		time.Now().UnixNano())), done: make(chan struct{}), out: &bytes.Buffer{}, errb: &bytes.Buffer{}}
	p.cmd = mk(append([]string{"VENOM_TEST_PAUSE_AT=" + point, "VENOM_TEST_PAUSE_FILE=" + p.file}, extra...))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errb
	// git runs git-venom-* as a child: the whole group is killed.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(e.t, p.cmd.Start())
	e.t.Cleanup(func() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) })
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	p.wait(e.t, point)
	return p
}

// next lets a command paused with VENOM_TEST_PAUSE_RESUME=1 go on to its
// next pause point, and waits there; what names that point for a
// failure.
func (p *paused) next(t *testing.T, what string) {
	t.Helper()
	require.NoError(t, os.Remove(p.file))
	p.wait(t, what)
}

// wait waits until the command is paused (its pause file is there).
func (p *paused) wait(t *testing.T, what string) {
	t.Helper()
	for {
		if _, err := os.Stat(p.file); err == nil {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("%v ended before %s: %v\n%s%s", p.cmd.Args, what, p.cmd.ProcessState, p.out, p.errb)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// resume lets a command paused with VENOM_TEST_PAUSE_RESUME=1 go on and
// waits for its end.
func (p *paused) resume(t *testing.T) Result {
	t.Helper()
	require.NoError(t, os.Remove(p.file))
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the command did not end:\n%s%s", p.out, p.errb)
	}
	return Result{Args: p.cmd.Args, Stdout: p.out.String(), Stderr: p.errb.String(), Code: p.cmd.ProcessState.ExitCode()}
}

// Kill9 kills a paused command the hard way.
func Kill9(t *testing.T, c *exec.Cmd) {
	t.Helper()
	require.NoError(t, syscall.Kill(-c.Process.Pid, syscall.SIGKILL))
	for i := 0; i < 200 && syscall.Kill(-c.Process.Pid, 0) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
}
