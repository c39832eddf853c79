package tests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npmInstall writes an npm-like node_modules under dir: packages, each
// with a package.json, an index.js and a lib file, about bytes in all.
func (e *Env) npmInstall(dir string, packages, bytes int) {
	e.t.Helper()
	each := bytes / packages / 3
	for i := 0; i < packages; i++ {
		pkg := fmt.Sprintf("%snode_modules/pkg-%03d/", dir, i)
		e.Write(pkg+"package.json", fmt.Sprintf(`{"name":"pkg-%03d","version":"1.0.%d"}`+"\n", i, i)+strings.Repeat(" ", each))
		e.Write(pkg+"index.js", "module.exports = require('./lib/x');\n"+strings.Repeat("/", each))
		e.Write(pkg+"lib/x.js", strings.Repeat("x", each)+"\n")
	}
	e.Write(dir+"node_modules/.package-lock.json", "{}\n")
}

// lsTree lists the paths of a commit's tree, with plain git.
func (e *Env) lsTree(rev string) []string {
	e.t.Helper()
	out := e.Git("ls-tree", "-r", "--name-only", "-z", rev)
	return strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
}

// TestExclude_NodeModulesOverTheLimit, end to end: an
// npm install past venom.maxTotalBytes fails the capture with the folder
// and the exact setting named; doctor suggests the same; once set, captures
// leave the folder out (skipped, "excluded") and a rollback leaves it alone
// (left, "excluded") while it restores everything else.
func TestExclude_NodeModulesOverTheLimit(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxTotalBytes", "64k")
	env.Write("package.json", `{"name":"app"}`+"\n")
	env.Write("src/app.js", "console.log(1)\n")
	env.Write("gen/schema.gen", "v1\n")
	env.Commit("app")
	k1 := env.Take(t, "--agent=a1")
	require.Equal(t, "k1", *k1.Checkpoint)

	// A small node_modules, within the limit, captured before any exclude.
	env.Write("node_modules/early/index.js", "early v1\n")
	env.Write("src/app.js", "console.log(2)\n")
	env.Write("gen/schema.gen", "v1.5\n")
	require.Equal(t, "k2", *env.Take(t, "--agent=a1").Checkpoint)
	assert.Contains(t, env.lsTree("refs/venom/checkpoints/a1/2"), "node_modules/early/index.js")

	// npm install: 200 KB of packages, past the 64 KB limit.
	env.npmInstall("", 60, 200<<10)
	snap := env.Snapshot()
	refs := env.VenomRefs()
	r := env.Venom("checkpoint", "--agent=a1", "--json")
	r.Fails(t, 1, "failed.checkpoint_too_large")
	e := ErrorOf(t, r)
	var data struct {
		Bytes   int64 `json:"bytes"`
		Folders []struct {
			Path    string `json:"path"`
			Bytes   int64  `json:"bytes"`
			Exclude string `json:"exclude"`
			Fix     string `json:"fix"`
		} `json:"folders"`
	}
	require.NoError(t, json.Unmarshal(e.Error.Data, &data))
	require.Len(t, data.Folders, 1, "%s", e.Error.Data)
	assert.Equal(t, "node_modules/", data.Folders[0].Path)
	assert.Equal(t, "/node_modules/", data.Folders[0].Exclude)
	assert.Equal(t, "git config --global --add venom.exclude /node_modules/", data.Folders[0].Fix)
	assert.Greater(t, data.Folders[0].Bytes, data.Bytes*9/10)
	assert.Contains(t, e.Error.Message, "node_modules/")
	assertFailedCleanly(t, env, snap, refs, "failed.checkpoint_too_large")
	h := env.Venom("checkpoint", "--agent=a1")
	require.Equal(t, 1, h.Code)
	assert.Contains(t, h.Stderr, "hint: leave node_modules/ out of every capture: git config --global --add venom.exclude /node_modules/\n")

	// doctor suggests the same setting (a folder over a quarter of the limit).
	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["capture.untracked_folders"])
	msg, fix := rep.check(t, "capture.untracked_folders")
	assert.Contains(t, msg, "node_modules/ (")
	assert.NotContains(t, msg, "src/")
	assert.Equal(t, data.Folders[0].Fix, fix)

	// The printed command, run as printed, sets the global key.
	sh := exec.Command("sh", "-c", fix)
	sh.Dir, sh.Env = env.Dir, env.Environ()
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "/node_modules/", env.Git("config", "--global", "--get-all", "venom.exclude"))
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["capture.untracked_folders"])

	// Tracked files can be excluded too: the tree keeps the index's version.
	env.Git("config", "--global", "--add", "venom.exclude", "*.gen")
	env.Write("gen/schema.gen", "v2, regenerated\n")
	env.Write("node_modules/early/index.js", "early v2\n")
	env.Write("src/app.js", "console.log(3)\n")
	k3 := env.Take(t, "--agent=a1")
	require.Equal(t, "k3", *k3.Checkpoint)
	assert.Equal(t, []SkippedPath{
		{Path: "gen/schema.gen", Bytes: int64(len("v2, regenerated\n")), Reason: "excluded"},
		{Path: "node_modules/", Bytes: 0, Reason: "excluded"},
	}, env.Item(t, "a1", "k3").Repos[0].Skipped)
	tree := env.lsTree("refs/venom/checkpoints/a1/3")
	for _, p := range tree {
		assert.False(t, strings.HasPrefix(p, "node_modules/"), p)
	}
	assert.Contains(t, tree, "src/app.js")
	assert.Equal(t, env.Git("rev-parse", ":gen/schema.gen"), env.Git("rev-parse", "refs/venom/checkpoints/a1/3:gen/schema.gen"))
	assert.Equal(t, "console.log(3)\n", env.Git("show", "refs/venom/checkpoints/a1/3:src/app.js")+"\n")

	// Rolling back to k2, which holds node_modules/early v1, and to k1,
	// which holds no node_modules at all: src goes back, node_modules and
	// the generated file stay as they are.
	dry := env.DryRun("--agent=a1", "--outside=overwrite", "k2")
	left := dry.LeftReasons()
	assert.Equal(t, "excluded", left["node_modules/early/index.js"], "%v", left)
	assert.Equal(t, "excluded", left["node_modules/"], "%v", left)
	assert.Equal(t, "excluded", left["gen/schema.gen"], "%v", left)
	for p := range dry.Classes() {
		assert.False(t, strings.HasPrefix(p, "node_modules/"), "planned: %s", p)
	}
	res := env.Rollback("--agent=a1", "--outside=overwrite", "k1")
	require.NotNil(t, res.Exact)
	assert.True(t, *res.Exact)
	assert.Equal(t, "console.log(1)\n", env.Read("src/app.js"))
	assert.Equal(t, "early v2\n", env.Read("node_modules/early/index.js"))
	assert.Equal(t, "module.exports = require('./lib/x');\n"+strings.Repeat("/", (200<<10)/60/3),
		env.Read("node_modules/pkg-007/index.js"))
	assert.Equal(t, "v2, regenerated\n", env.Read("gen/schema.gen"))
	assert.Equal(t, "excluded", res.LeftReasons()["node_modules/"])
	// git agrees: only the excluded paths differ from k1's tree.
	st := env.GitRaw("status", "--porcelain=v1", "--untracked-files=normal").Stdout
	assert.Equal(t, " M gen/schema.gen\n?? node_modules/\n", st)

	// An excluded folder that is gone now (so no capture lists it) stays
	// gone, though k2 holds a file in it.
	env.Remove("node_modules")
	dry = env.DryRun("--agent=a1", "--outside=overwrite", "k2")
	assert.Equal(t, "excluded", dry.LeftReasons()["node_modules/early/index.js"])
	assert.NotContains(t, dry.Classes(), "node_modules/early/index.js")
	env.Rollback("--agent=a1", "--outside=overwrite", "k2")
	assert.NoFileExists(t, env.Path("node_modules/early/index.js"))
	assert.Equal(t, "console.log(2)\n", env.Read("src/app.js"))
}

// TestExclude_OnlyUserScopes: a repository's own config cannot exclude
// anything (docs/checkpoints.md#configuration: venom.* keys are user-only), and a pattern set in
// the system scope counts like a global one.
func TestExclude_OnlyUserScopes(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "--local", "venom.exclude", "secret.txt")
	env.Write("secret.txt", "captured\n")
	env.Take(t, "--agent=a1")
	assert.Empty(t, env.Item(t, "a1", "k1").Repos[0].Skipped)
	assert.Contains(t, env.lsTree("refs/venom/checkpoints/a1/1"), "secret.txt")

	sys := env.Root + "/system.gitconfig"
	env.Extra = []string{"GIT_CONFIG_NOSYSTEM=0", "GIT_CONFIG_SYSTEM=" + sys}
	env.Git("config", "--file", sys, "venom.exclude", "*.txt")
	env.Write("secret.txt", "changed\n")
	env.Write("b/other.txt", "x\n")
	env.Take(t, "--agent=a1")
	assert.Equal(t, []SkippedPath{
		{Path: "b/other.txt", Bytes: 2, Reason: "excluded"},
		{Path: "secret.txt", Bytes: 8, Reason: "excluded"},
	}, env.Item(t, "a1", "k2").Repos[0].Skipped)
}

// git venom-diff against the current files shows what a
// rollback would restore, so paths venom.exclude matches (which a capture
// leaves out, and a rollback leaves alone) are not shown as deleted; the
// human output names them on stderr. Between two checkpoints the diff is
// history, and shows them.
func TestDiff_LeavesExcludedPathsOut(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("src/app.js", "v1\n")
	env.Write("node_modules/dep/index.js", "dep\n")
	env.Take(t, "--agent=a1") // k1 holds node_modules/
	env.Git("config", "--global", "--add", "venom.exclude", "/node_modules/")
	env.Write("src/app.js", "v2\n")
	env.Take(t, "--agent=a1") // k2 does not

	var d struct {
		Files []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
		} `json:"files"`
	}
	env.Venom("diff", "--agent=a1", "k1", "--json").OK(t).JSON(t, &d)
	require.Len(t, d.Files, 1, "%+v", d.Files)
	assert.Equal(t, "src/app.js", d.Files[0].Path)
	h := env.Venom("diff", "--agent=a1", "k1")
	h.OK(t)
	assert.Contains(t, h.Stdout, "src/app.js")
	assert.NotContains(t, h.Stdout, "node_modules")
	assert.NotContains(t, h.Stdout, "delete mode")
	assert.Equal(t, "Not shown, as venom.exclude keeps them out and a rollback leaves them:\n  node_modules/\n", h.Stderr)
	// The rollback agrees: it restores src/app.js and leaves node_modules.
	dry := env.DryRun("--agent=a1", "--outside=overwrite", "k1")
	assert.Equal(t, "excluded", dry.LeftReasons()["node_modules/"], "%v", dry.LeftReasons())
	// --stat and --name-only leave them out too; with only them changed,
	// there is nothing to show but the note.
	assert.NotContains(t, env.Venom("diff", "--agent=a1", "k1", "--name-only").OK(t).Stdout, "node_modules")
	env.Write("src/app.js", "v1\n")
	n := env.Venom("diff", "--agent=a1", "k1").OK(t)
	assert.Equal(t, "No changes between k1 and the current files.\n", n.Stdout)
	assert.Contains(t, n.Stderr, "  node_modules/\n")
	// Between two checkpoints: history, as git diff shows it.
	env.Venom("diff", "--agent=a1", "k1", "k2", "--json").OK(t).JSON(t, &d)
	var paths []string
	for _, f := range d.Files {
		paths = append(paths, f.Path+":"+f.Change)
	}
	assert.Equal(t, []string{"node_modules/dep/index.js:delete", "src/app.js:modify"}, paths)
}
