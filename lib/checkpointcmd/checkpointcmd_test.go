package checkpointcmd

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/ui"
)

// In-process command tests: the grammar and the verbs run through
// cli.Run, the entry point main uses, with test streams in place of the
// terminal (as gh's iostreams.Test), on real repositories made with git.
// The end-to-end tests (tests/) run the built binaries.

type world struct {
	t       *testing.T
	dir     string
	environ []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	w := &world{t: t, dir: filepath.Join(root, "repo"), environ: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"), "LANG=C", "TERM=dumb",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T",
		"GIT_COMMITTER_EMAIL=t@example.com"}}
	require.NoError(t, os.MkdirAll(w.dir, 0o755))
	w.git("init", "-q", "-b", "main")
	w.write("a.txt", "a\n")
	w.git("add", "a.txt")
	w.git("commit", "-qm", "base")
	return w
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = w.dir, w.environ
	out, err := cmd.CombinedOutput()
	require.NoError(w.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (w *world) write(rel, content string) {
	w.t.Helper()
	require.NoError(w.t, os.WriteFile(filepath.Join(w.dir, rel), []byte(content), 0o644))
}

// run is one `git venom-checkpoint args...`: its exit code and streams.
func (w *world) run(args ...string) (int, string, string) {
	w.t.Helper()
	streams, out, errOut := ui.Test()
	env := &cli.Env{Ctx: context.Background(), UI: streams, Environ: w.environ, Dir: w.dir,
		Name: "git-venom-checkpoint", JSON: slices.Contains(args, "--json")}
	code := cli.Run(env, New(), args)
	return code, out.String(), errOut.String()
}

func TestTake_JSONAndRef(t *testing.T) {
	w := newWorld(t)
	w.write("b.txt", "b\n")
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
	assert.Equal(t, "b", w.git("show", "refs/venom/checkpoints/a1/1:b.txt"))
	assert.Equal(t, "?? b.txt", w.git("status", "--porcelain"))

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
	w.write("a.txt", "changed\n")
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
	require.NoError(t, os.MkdirAll(filepath.Join(w.dir, "d", "e"), 0o755))
	w.write("d/e/x.txt", "x\n")
	code, _, errOut := w.run("--agent=a1")
	require.Equal(t, 0, code, errOut)
	w.write("a.txt", "changed\n")
	w.write("d/e/x.txt", "x2\n")
	w.write("d/y.txt", "y\n")
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
	names := w.git("diff-tree", "-r", "--name-only", "refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2")
	require.NotNil(t, l.Checkpoints[0].FilesChanged)
	assert.Equal(t, len(strings.Split(names, "\n")), *l.Checkpoints[0].FilesChanged)
}
