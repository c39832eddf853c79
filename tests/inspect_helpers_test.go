package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

// LogPath is the journal file of the repository.
func (e *Env) LogPath() string {
	e.t.Helper()
	common := e.CommonDir()
	return filepath.Join(common, "venom", "log.jsonl")
}

// CheckpointRefs lists the refs under refs/venom/checkpoints/<agent>/ as
// git for-each-ref lists them (listRefs), as "agent/n".
func (e *Env) CheckpointRefs(agent string) []string {
	e.t.Helper()
	list := []string{}
	for _, r := range e.listRefs("refs/venom/checkpoints/" + agent + "/") {
		list = append(list, strings.TrimPrefix(r.name, "refs/venom/checkpoints/"))
	}
	return list
}

// SafetyCheckpoint stands in for a rollback's pre_rollback checkpoint: a
// ref at the agent's next number holding HEAD's tree, and its record.
func (e *Env) SafetyCheckpoint(agent string, n int) {
	e.t.Helper()
	commit := e.Git("commit-tree", "-p", "HEAD", "-m", "venom checkpoint", "HEAD^{tree}")
	e.Git("update-ref", fmt.Sprintf("refs/venom/checkpoints/%s/%d", agent, n), commit, "")
	e.AppendLog("checkpoint.taken", map[string]any{"agent": agent, "checkpoint": fmt.Sprintf("k%d", n),
		"reason": "pre_rollback", "turn": nil, "through_turn": nil, "at": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"mid_turn": false, "overlap": false, "repos": []map[string]any{{"repo": ".", "path": e.Dir, "commit": commit,
			"head": e.Git("rev-parse", "HEAD"), "skipped": []any{}, "submodules": []any{}}}})
}

// AgeCheckpoints moves the at of the agent's given checkpoints back by d,
// rewriting the journal: how a test makes a checkpoint old.
func (e *Env) AgeCheckpoints(agent string, d time.Duration, ids ...string) {
	e.t.Helper()
	b, err := os.ReadFile(e.LogPath())
	require.NoError(e.t, err)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		var m map[string]any
		require.NoError(e.t, json.Unmarshal([]byte(line), &m))
		if m["type"] == "checkpoint.taken" && m["agent"] == agent && want[m["checkpoint"].(string)] {
			at, err := time.Parse("2006-01-02T15:04:05.000Z", m["at"].(string))
			require.NoError(e.t, err)
			old := at.Add(-d).Format("2006-01-02T15:04:05.000Z")
			line = strings.Replace(line, fmt.Sprintf(`"at":%q`, m["at"]), fmt.Sprintf(`"at":%q`, old), 1)
		}
		out = append(out, line)
	}
	require.NoError(e.t, os.WriteFile(e.LogPath(), []byte(strings.Join(out, "\n")+"\n"), 0o644))
}

// TurnN runs turn n of the agent with rollback's Turn helper, writing one
// file, so every turn_end makes a new checkpoint.
func (e *Env) TurnN(agent string, n int, extra ...string) {
	e.t.Helper()
	e.Turn(agent, func() { e.Write(fmt.Sprintf("turn-%s.txt", agent), fmt.Sprintf("turn %d\n", n)) }, extra...)
}
