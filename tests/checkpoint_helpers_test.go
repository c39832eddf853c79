package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TakeResult is `git venom-checkpoint --json`'s result.
type TakeResult struct {
	Agent      string  `json:"agent"`
	Checkpoint *string `json:"checkpoint"`
	Reused     bool    `json:"reused"`
	// Skipped is what the capture left out (docs/json.md#take).
	Skipped []SkippedPath `json:"skipped"`
}

// ListResult is `git venom-checkpoint list --json`'s result.
type ListResult struct {
	Agent       string     `json:"agent"`
	Pending     bool       `json:"pending"`
	Checkpoints []ListItem `json:"checkpoints"`
	MoreCount   int        `json:"more_count"`
}

// ListItem is one checkpoint of a listing: the docs/checkpoints.md#the-log record plus
// conversation, label and labels.
type ListItem struct {
	Checkpoint   string      `json:"checkpoint"`
	Reason       string      `json:"reason"`
	Turn         *string     `json:"turn"`
	ThroughTurn  *string     `json:"through_turn"`
	At           string      `json:"at"`
	MidTurn      bool        `json:"mid_turn"`
	Overlap      bool        `json:"overlap"`
	Conversation bool        `json:"conversation"`
	Label        *string     `json:"label"`
	Labels       []string    `json:"labels"`
	Repos        []RepoState `json:"repos"`
}

// RepoState is one member of a checkpoint's repos[].
type RepoState struct {
	Repo       string          `json:"repo"`
	Path       string          `json:"path"`
	Commit     string          `json:"commit"`
	Head       *string         `json:"head"`
	Branch     *string         `json:"branch"`
	Skipped    []SkippedPath   `json:"skipped"`
	Submodules []SubmoduleLink `json:"submodules"`
}

// SkippedPath is a member of skipped[].
type SkippedPath struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64"`
	Bytes   int64  `json:"bytes"`
	Reason  string `json:"reason"`
}

// SubmoduleLink is a member of submodules[].
type SubmoduleLink struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64"`
	Commit  string `json:"commit"`
	Dirty   bool   `json:"dirty"`
}

// Take runs a capture with --json and decodes its result.
func (e *Env) Take(t *testing.T, args ...string) TakeResult {
	t.Helper()
	var res TakeResult
	e.Venom("checkpoint", append(args, "--json")...).OK(t).JSON(t, &res)
	return res
}

// List runs list --json and decodes it.
func (e *Env) List(t *testing.T, args ...string) ListResult {
	t.Helper()
	var l ListResult
	e.Venom("checkpoint", append([]string{"list"}, append(args, "--json")...)...).OK(t).JSON(t, &l)
	return l
}

// Item returns checkpoint id of an agent's listing.
func (e *Env) Item(t *testing.T, agent, id string) ListItem {
	t.Helper()
	for _, it := range e.List(t, "--agent="+agent).Checkpoints {
		if it.Checkpoint == id {
			return it
		}
	}
	t.Fatalf("no checkpoint %s/%s in the listing", agent, id)
	return ListItem{}
}

// SetGlobal sets a key in the test's global git config (venom.* are
// user-only keys, docs/checkpoints.md#configuration).
func (e *Env) SetGlobal(key, value string) {
	e.t.Helper()
	e.Git("config", "--global", key, value)
}

// VenomRefs lists refname=oid under refs/venom, sorted.
func (e *Env) VenomRefs() []string {
	e.t.Helper()
	var out []string
	for _, r := range e.listRefs("refs/venom") {
		out = append(out, r.name+"="+r.oid)
	}
	return out
}

// StateDir is the common dir's venom folder (CommonDir).
func (e *Env) StateDir() string {
	e.t.Helper()
	return filepath.Join(e.CommonDir(), "venom")
}

// TmpFiles lists what is left in the state directory's tmp folder.
func (e *Env) TmpFiles() []string {
	e.t.Helper()
	entries, _ := os.ReadDir(filepath.Join(e.StateDir(), "tmp"))
	var out []string
	for _, de := range entries {
		out = append(out, de.Name())
	}
	return out
}

// LogTypes lists the journal's record types in order.
func (e *Env) LogTypes() []string {
	e.t.Helper()
	var out []string
	for _, r := range e.LogRecords() {
		out = append(out, fmt.Sprint(r["type"]))
	}
	return out
}

// AssertSeqGapless checks the journal's seq is 1, 2, 3, ... and that every
// line is a whole record.
func (e *Env) AssertSeqGapless(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.StateDir(), "log.jsonl"))
	require.NoError(t, err)
	require.True(t, len(b) == 0 || b[len(b)-1] == '\n', "log.jsonl ends in a torn line")
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, l := range lines {
		var r struct {
			Seq int `json:"seq"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r), "line %d: %s", i+1, l)
		require.Equal(t, i+1, r.Seq, "line %d: %s", i+1, l)
	}
}

// MarkerHooks installs every hook a capture could trigger, each writing a
// marker file named after itself into dir, and returns dir.
func (e *Env) MarkerHooks(gitDir string) string {
	e.t.Helper()
	dir := filepath.Join(e.Root, "markers")
	markerHooks(e.t, filepath.Join(gitDir, "hooks"), dir)
	return dir
}

// Markers lists the marker files hooks wrote.
func Markers(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, de := range entries {
		out = append(out, de.Name())
	}
	sort.Strings(out)
	return out
}

// WaitFile waits until path exists, for pause points.
func WaitFile(t *testing.T, path string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not appear within %s", path, limit)
}

// ErrorEnvelope is docs/errors.md#exit-codes's --json error.
type ErrorEnvelope struct {
	Error struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// ErrorOf decodes a --json error, checking the envelope's exact shape:
// one member "error" with exactly code, message and data, in that order.
func ErrorOf(t *testing.T, r Result) ErrorEnvelope {
	t.Helper()
	var env ErrorEnvelope
	r.JSON(t, &env)
	require.NotEmpty(t, env.Error.Code, "stdout: %s", r.Stdout)
	require.NotEmpty(t, env.Error.Message)
	require.Equal(t, []string{"error"}, Keys(t, r.Stdout))
	var inner map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &inner))
	require.Equal(t, []string{"code", "message", "data"}, Keys(t, string(inner["error"])), "stdout: %s", r.Stdout)
	return env
}

// Keys lists the member names of a JSON object in the order they appear.
func Keys(t *testing.T, obj string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(obj))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "not an object: %s", obj)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}
