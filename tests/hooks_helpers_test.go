package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hook fixtures were recorded from Claude Code 2.1.332, Codex 0.171.0 and
// Qwen Code 0.24.4 (tests/testdata/hooks, README there); these are the
// folders of the recording, replaced with the test's own.
const (
	ccProj = "/tmp/hz/ccproj"
	ccHome = "/tmp/hz/cchome"
	cxProj = "/tmp/hz/cxproj"
	cxHome = "/tmp/hz/cxhome2"
	qwProj = "/tmp/qx/repo"
	qwHome = "/tmp/qx/home"
)

var hookData = filepath.Join("testdata", "hooks")

// claudeProjectDir is Claude Code's session folder for the test's repository.
func (e *Env) claudeProjectDir() string {
	return filepath.Join(e.Home, ".claude", "projects", regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(e.Dir, "-"))
}

// Payload loads a hook fixture, moves the recording's folders to the test's
// and sets the given members.
func (e *Env) Payload(rel string, set map[string]any) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(hookData, rel))
	require.NoError(e.t, err)
	s := string(b)
	s = strings.ReplaceAll(s, ccHome+"/.claude/projects/-tmp-hz-ccproj", e.claudeProjectDir())
	s = strings.ReplaceAll(s, ccProj, e.Dir)
	s = strings.ReplaceAll(s, cxHome, filepath.Join(e.Home, ".codex"))
	s = strings.ReplaceAll(s, cxProj, e.Dir)
	s = strings.ReplaceAll(s, qwHome, e.Home)
	s = strings.ReplaceAll(s, qwProj, e.Dir)
	var m map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(s), &m))
	delete(m, "_fixture_note")
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, err := json.Marshal(m)
	require.NoError(e.t, err)
	return string(out)
}

// hookSettings is a harness's hooks settings file as install writes it.
type hookSettings struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// ReadHookSettings reads the settings file at rel in the worktree.
func (e *Env) ReadHookSettings(rel string) hookSettings {
	e.t.Helper()
	var s hookSettings
	require.NoError(e.t, json.Unmarshal([]byte(e.Read(rel)), &s))
	return s
}

// hookNote is a prompt hook's answer carrying the rollback note.
type hookNote struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Hook runs `git venom-checkpoint hook <harness> args...` with the payload
// on stdin; a hook always exits 0.
func (e *Env) Hook(harness, payload string, args ...string) Result {
	e.t.Helper()
	r := e.VenomInput(payload, "checkpoint", append([]string{"hook", harness}, args...)...)
	r.OK(e.t)
	return r
}

// conversations maps checkpoint ids to their conversation member.
func conversations(l ListResult) map[string]bool {
	out := map[string]bool{}
	for _, c := range l.Checkpoints {
		out[c.Checkpoint] = c.Conversation
	}
	return out
}

// Transcript writes the Claude Code session file of the synthetic fixture
// (three turns) up to and including the line with uuid upTo, with its
// session id, the way the file stands when that line has been written.
func (e *Env) Transcript(session, upTo string) string {
	e.t.Helper()
	const fixtureSession = "5e55a0b1-7c1d-4e2f-9a3b-0c4d5e6f7a80"
	b, err := os.ReadFile(filepath.Join(hookData, "claude", fixtureSession+".jsonl"))
	require.NoError(e.t, err)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		lines = append(lines, strings.ReplaceAll(strings.ReplaceAll(l, fixtureSession, session), ccProj, e.Dir))
		if upTo != "" && strings.Contains(l, `"uuid":"`+upTo+`"`) {
			break
		}
	}
	dir := e.claudeProjectDir()
	require.NoError(e.t, os.MkdirAll(dir, 0o700))
	p := filepath.Join(dir, session+".jsonl")
	require.NoError(e.t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return p
}

// codexDouble builds tests/codexdouble once, as "codex" in a folder of its own.
var codexDouble = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "venom-codexdouble-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "codex"), "./tests/codexdouble")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the codex double: %v\n%s", err, out)
	}
	return dir, nil
})

// UseCodexDouble puts the protocol double first on PATH as codex, with
// CODEX_HOME in the test's home and the given threads (id -> turn ids).
func (e *Env) UseCodexDouble(threads map[string][]string) string {
	e.t.Helper()
	dir, err := codexDouble()
	require.NoError(e.t, err)
	home := filepath.Join(e.Home, ".codex")
	require.NoError(e.t, os.MkdirAll(home, 0o755))
	b, err := json.Marshal(map[string]any{"threads": threads})
	require.NoError(e.t, err)
	require.NoError(e.t, os.WriteFile(filepath.Join(home, "double.json"), b, 0o644))
	e.Extra = append(e.Extra, "PATH="+dir+":"+binDir+":"+gitDir+":/usr/local/bin:/usr/bin:/bin", "CODEX_HOME="+home)
	return home
}

// envFile reads a recorded environment (NAME=value lines).
func envFile(t *testing.T, rel string) []string {
	b, err := os.ReadFile(filepath.Join(hookData, rel))
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, "=") {
			out = append(out, l)
		}
	}
	return out
}

// Rewound is the conversation member of a real rollback, with the members
// a rewind adds.
type Rewound struct {
	Conversation struct {
		Rewinds        bool     `json:"rewinds"`
		ThroughTurn    *string  `json:"through_turn"`
		Drops          []string `json:"drops"`
		HarnessSession string   `json:"harness_session"`
		Resume         []string `json:"resume"`
	} `json:"conversation"`
}

// RollbackConv runs the dry run and the real call and decodes the
// conversation member.
func (e *Env) RollbackConv(args ...string) Rewound {
	e.t.Helper()
	plan := e.DryRun(args...).Plan
	var res Rewound
	e.Venom("rollback", append(append([]string{}, args...), "--plan="+plan, "--json")...).OK(e.t).JSON(e.t, &res)
	return res
}

// PlanClasses is a dry run's classes with --outside=keep: path -> class,
// or "left <reason>" for a path the rollback leaves.
func (e *Env) PlanClasses(agent, checkpoint string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, rp := range e.DryRun("--agent="+agent, "--checkpoint="+checkpoint, "--outside=keep").Repos {
		for _, f := range rp.Files {
			out[f.Path] = f.Class
		}
		for _, l := range rp.Left {
			out[l.Path] = "left " + l.Reason
		}
	}
	return out
}

// EditsByAgent gathers the log's edit.recorded paths by agent, in order.
func (e *Env) EditsByAgent() map[string][]string {
	e.t.Helper()
	edits := map[string][]string{}
	for _, r := range e.Records("edit.recorded") {
		for _, p := range r["paths"].([]any) {
			edits[r["agent"].(string)] = append(edits[r["agent"].(string)], p.(string))
		}
	}
	return edits
}
