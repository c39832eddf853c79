package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// At is the same test world seen from another folder: a linked worktree, a
// tree whose git dir lives elsewhere. Commands, snapshots and the recipe run
// there.
func (e *Env) At(dir string) *Env {
	e.mu.Lock()
	defer e.mu.Unlock()
	return &Env{t: e.t, Root: e.Root, Dir: dir, Home: e.Home, tick: e.tick, Extra: append([]string{}, e.Extra...)}
}

// With is the same test world with extra environment for every command,
// git's own included (a leaked variable, a pinned config).
func (e *Env) With(extra ...string) *Env {
	n := e.At(e.Dir)
	n.Extra = append(n.Extra, extra...)
	return n
}

// takenRecord is the part of a checkpoint.taken record the robustness tests
// read.
type takenRecord struct {
	Checkpoint string `json:"checkpoint"`
	Reason     string `json:"reason"`
	Repos      []struct {
		Commit  string  `json:"commit"`
		Head    *string `json:"head"`
		Branch  *string `json:"branch"`
		Skipped []struct {
			Path   string `json:"path"`
			Bytes  int64  `json:"bytes"`
			Reason string `json:"reason"`
		} `json:"skipped"`
	} `json:"repos"`
}

// lastTaken is the newest checkpoint.taken record of the log.
func (e *Env) lastTaken() takenRecord {
	e.t.Helper()
	recs := e.LogRecords()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i]["type"] == "checkpoint.taken" {
			b, _ := json.Marshal(recs[i])
			var r takenRecord
			require.NoError(e.t, json.Unmarshal(b, &r))
			return r
		}
	}
	e.t.Fatal("no checkpoint.taken record")
	return takenRecord{}
}

// CaptureLikeRecipe takes a checkpoint of agent and checks docs/checkpoints.md#how-a-capture-runs with
// plain git: the checkpoint's tree is the recipe's for the same state, with
// the paths the capture skipped left out of the recipe's add, and nothing
// the user can see changed. It returns the checkpoint's commit.
func (e *Env) CaptureLikeRecipe(t *testing.T, agent string, args ...string) string {
	t.Helper()
	snap := e.Snapshot()
	var res struct {
		Checkpoint string `json:"checkpoint"`
		Reused     bool   `json:"reused"`
	}
	e.Venom("checkpoint", append([]string{"--agent=" + agent, "--json"}, args...)...).OK(t).JSON(t, &res)
	e.AssertUntouched(t, snap)
	ref := "refs/venom/checkpoints/" + agent + "/" + strings.TrimPrefix(res.Checkpoint, "k")
	commit, tree := e.refCommit(ref)
	var skipped []string
	if !res.Reused {
		rec := e.lastTaken()
		require.Equal(t, res.Checkpoint, rec.Checkpoint)
		require.Equal(t, commit, rec.Repos[0].Commit)
		for _, s := range rec.Repos[0].Skipped {
			if !strings.HasSuffix(s.Path, "/") {
				skipped = append(skipped, s.Path)
			}
		}
	}
	require.Equal(t, e.RecipeTree(skipped...), tree,
		"the capture differs from the recipe of docs/checkpoints.md#how-a-capture-runs")
	return commit
}

// markerHooks installs, in the hooks folder dir, every hook git can run
// around what git-venom does, each appending its arguments to a marker
// file named after it in markers, and returns a function listing the
// markers that exist (Markers).
func markerHooks(t *testing.T, dir, markers string) func() []string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(markers, 0o755))
	for _, h := range []string{"reference-transaction", "post-index-change", "pre-commit", "post-commit",
		"commit-msg", "prepare-commit-msg", "post-checkout", "post-rewrite", "pre-auto-gc", "post-merge",
		"fsmonitor-watchman", "pre-push"} {
		script := fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %q\n", filepath.Join(markers, h))
		require.NoError(t, os.WriteFile(filepath.Join(dir, h), []byte(script), 0o755))
	}
	return func() []string { return Markers(markers) }
}
