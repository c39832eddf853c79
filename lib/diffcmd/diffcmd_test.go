package diffcmd

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/checkpointcmd"
	"github.com/git-venom/git-venom/lib/clitest"
)

// In-process command tests: git venom-diff through cli.Run with test
// streams on real repositories (lib/clitest), its answers checked against
// plain git diff between the checkpoints' refs.

const k1, k2 = "refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2"

// turned is a repository where agent a1's turn changed a.txt, added d/b.txt
// and removed nothing, between k1 and k2.
func turned(t *testing.T) *clitest.World {
	t.Helper()
	w := clitest.New(t)
	checkpoint(t, w, "--reason=turn_start")
	w.Write("a.txt", "a\nmore\n")
	w.Write("d/b.txt", "b\n")
	checkpoint(t, w, "--reason=turn_end")
	return w
}

func checkpoint(t *testing.T, w *clitest.World, args ...string) {
	t.Helper()
	r := w.Run("git-venom-checkpoint", checkpointcmd.New(), append([]string{"--agent=a1"}, args...)...)
	require.Equal(t, 0, r.Code, r.Err)
}

func diff(w *clitest.World, args ...string) clitest.Result {
	return w.Run("git-venom-diff", New(), args...)
}

func TestDiff_AsGitDiffBetweenTheRefs(t *testing.T) {
	w := turned(t)
	r := diff(w, "k1", "k2", "--name-only")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Equal(t, w.Git("diff", "--name-only", k1, k2)+"\n", r.Out)

	r = diff(w, "k1", "k2")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Contains(t, r.Out, w.Git("diff", k1, k2), "the patch is git's")
	assert.NotContains(t, r.Out, "\x1b[", "no colour on a pipe")

	r = diff(w, "--from=k1", "--to=k2", "--stat")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Contains(t, r.Out, "2 files changed, 2 insertions(+)")
	assert.NotContains(t, r.Out, "@@", "--stat shows no patch")
}

// Without a second checkpoint the diff is to the current files, which it
// captures without a ref or a log record.
func TestDiff_ToTheCurrentFilesWritesNoRef(t *testing.T) {
	w := turned(t)
	w.Write("c.txt", "c\n")
	refs, status := w.Git("for-each-ref", "refs/venom"), w.Git("status", "--porcelain")
	r := diff(w, "k2", "--name-only")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Equal(t, "c.txt\n", r.Out)
	assert.Equal(t, refs, w.Git("for-each-ref", "refs/venom"))
	assert.Equal(t, status, w.Git("status", "--porcelain"), "the index is untouched")

	r = diff(w, "k2", "k2")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Equal(t, "No changes between k2 and k2.\n", r.Out)
	r = diff(w, "k1", "k2", "--", "nothing-here")
	require.Equal(t, 0, r.Code, r.Err)
	assert.Equal(t, "No changes to nothing-here between k1 and k2; 2 files changed elsewhere.\n", r.Out)
}

func TestDiff_JSONFilesAndPatchForPaths(t *testing.T) {
	w := turned(t)
	r := diff(w, "k1", "k2", "--json")
	require.Equal(t, 0, r.Code, r.Err)
	var res struct {
		Files []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
		} `json:"files"`
		Patch *json.RawMessage `json:"patch"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &res), r.Out)
	require.Len(t, res.Files, 2)
	assert.Equal(t, "a.txt", res.Files[0].Path)
	assert.Equal(t, "d/b.txt", res.Files[1].Path)
	assert.Nil(t, res.Patch, "no patch without paths")

	r = diff(w, "k1", "k2", "--json", "--", "d")
	require.Equal(t, 0, r.Code, r.Err)
	res.Patch = nil
	require.NoError(t, json.Unmarshal([]byte(r.Out), &res), r.Out)
	require.Len(t, res.Files, 1)
	assert.NotNil(t, res.Patch, "a patch for the paths asked")
}

func TestDiff_BadArgumentsAreUsageErrors(t *testing.T) {
	w := turned(t)
	for _, args := range [][]string{
		{},                                 // no checkpoint
		{"k1", "k2", "k3"},                 // three
		{"k1", "--from=k2"},                // twice
		{"k1", "--stat", "--name-only"},    // both
		{"k1", "--json", "--", "../out"},   // outside the repository
		{"k9", "--json", "--name-only"},    // no such checkpoint
		{"k1", "--agent=nobody", "--json"}, // no such agent
	} {
		r := diff(w, args...)
		assert.NotEqual(t, 0, r.Code, "%v", args)
		assert.NotContains(t, r.Err+r.Out, "panic", "%v", args)
	}
	r := diff(w, "k1", "--json", "--", "../out")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Out, `"code":"invalid_params.path"`)
	r = diff(w, "k9", "--json")
	assert.Contains(t, r.Out, `"code":"not_found.checkpoint"`)
}
