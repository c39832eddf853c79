package checkpointcmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/clitest"
)

// In-process command tests through cli.Run with test streams, on real
// repositories made with git (lib/clitest).

type world struct{ *clitest.World }

func newWorld(t *testing.T) world { return world{clitest.New(t)} }

// run is one `git venom-checkpoint args...`: its exit code and streams.
func (w world) run(args ...string) (int, string, string) {
	r := w.Run("git-venom-checkpoint", New(), args...)
	return r.Code, r.Out, r.Err
}

func TestTake_JSONAndRef(t *testing.T) {
	w := newWorld(t)
	w.Write("b.txt", "b\n")
	code, out, errOut := w.run("--agent=a1", "--json")
	require.Equal(t, 0, code, errOut)
	var res struct {
		Agent      string `json:"agent"`
		Checkpoint string `json:"checkpoint"`
		Reused     bool   `json:"reused"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "a1", res.Agent)
	assert.Equal(t, "k1", res.Checkpoint)
	assert.False(t, res.Reused)
	// git says what the checkpoint holds, and the index is untouched.
	assert.Equal(t, "b", w.Git("show", "refs/venom/checkpoints/a1/1:b.txt"))
	assert.Equal(t, "?? b.txt", w.Git("status", "--porcelain"))

	code, out, _ = w.run("--agent=a1", "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.True(t, res.Reused, "an unchanged tree reuses k1")
}

func TestErrors_EnvelopeAndExitClass(t *testing.T) {
	w := newWorld(t)
	code, out, errOut := w.run("--agent=Not Valid", "--json")
	assert.Equal(t, 2, code)
	assert.Empty(t, errOut)
	var env struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &env), out)
	assert.Equal(t, "invalid_params.agent", env.Error.Code)

	code, out, errOut = w.run("--agent=Not Valid")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "error: invalid_params.agent: "), errOut)

	code, _, errOut = w.run("lsit")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "list", "a mistyped verb is answered with the verb it was likely meant to be")
}

func TestList_HumanAndJSON(t *testing.T) {
	w := newWorld(t)
	w.Write("a.txt", "changed\n")
	code, _, errOut := w.run("--agent=a1", "--label=first")
	require.Equal(t, 0, code, errOut)
	code, out, _ := w.run("list", "--agent=a1", "--no-pager")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "k1")
	assert.Contains(t, out, "first")
	assert.NotContains(t, out, "\x1b[", "no colour off a terminal")

	code, out, _ = w.run("list", "--agent=a1", "--json")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"checkpoint":"k1"`)
}

// list's FILES count is git diff-tree -r's between a checkpoint and the
// one before it, and null for the first.
func TestList_FilesChangedAsGitDiffTree(t *testing.T) {
	w := newWorld(t)
	w.Write("d/e/x.txt", "x\n")
	code, _, errOut := w.run("--agent=a1")
	require.Equal(t, 0, code, errOut)
	w.Write("a.txt", "changed\n")
	w.Write("d/e/x.txt", "x2\n")
	w.Write("d/y.txt", "y\n")
	code, _, errOut = w.run("--agent=a1")
	require.Equal(t, 0, code, errOut)

	code, out, _ := w.run("list", "--agent=a1", "--json")
	require.Equal(t, 0, code)
	var l struct {
		Checkpoints []struct {
			Checkpoint   string `json:"checkpoint"`
			FilesChanged *int   `json:"files_changed"`
		} `json:"checkpoints"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Checkpoints, 2)
	assert.Nil(t, l.Checkpoints[1].FilesChanged, "the first has nothing before it")
	names := w.Git("diff-tree", "-r", "--name-only", "refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2")
	require.NotNil(t, l.Checkpoints[0].FilesChanged)
	assert.Equal(t, len(strings.Split(names, "\n")), *l.Checkpoints[0].FilesChanged)
}
