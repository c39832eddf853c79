package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type diffFile struct {
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary"`
}

type diffResult struct {
	Files []diffFile `json:"files"`
	Patch *struct {
		Text      string `json:"text"`
		Truncated bool   `json:"truncated"`
		Bytes     int    `json:"bytes"`
	} `json:"patch"`
}

// gitFiles is the oracle: plain git's --raw and --numstat of two trees.
func gitFiles(t *testing.T, env *Env, from, to string) []diffFile {
	t.Helper()
	raw := env.Git("diff-tree", "-r", "--no-renames", "--raw", from, to)
	num := env.Git("diff-tree", "-r", "--no-renames", "--numstat", from, to)
	out := []diffFile{}
	nums := map[string][2]string{}
	for _, l := range strings.Split(num, "\n") {
		if p := strings.SplitN(l, "\t", 3); len(p) == 3 {
			nums[p[2]] = [2]string{p[0], p[1]}
		}
	}
	for _, l := range strings.Split(raw, "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		change := map[byte]string{'A': "create", 'D': "delete"}[meta[len(meta)-1]]
		if change == "" {
			change = "modify"
		}
		f := diffFile{Repo: ".", Path: path, Change: change}
		n := nums[path]
		if n[0] == "-" {
			f.Binary = true
		} else {
			fmt.Sscan(n[0], &f.Added)
			fmt.Sscan(n[1], &f.Removed)
		}
		out = append(out, f)
	}
	return out
}

// threeCheckpoints makes k1, k2 and k3 of agent a1 with a text edit, a
// binary edit, a new file, a deletion and a mode change between k1 and k2.
func threeCheckpoints(t *testing.T) *Env {
	env := NewEnv(t)
	env.Write("a.txt", "one\ntwo\nthree\n")
	env.Write("gone.txt", "bye\n")
	env.Write("bin.dat", "\x00\x01\x02")
	env.Write("run.sh", "echo hi\n")
	env.Commit("base")
	require.Equal(t, "k1", env.Checkpoint("--agent=a1"))
	env.Write("a.txt", "one\n2\nthree\nfour\n")
	env.Write("bin.dat", "\x00\x01\x03\x04")
	env.Write("dir/new.txt", "new\n")
	env.Remove("gone.txt")
	require.NoError(t, os.Chmod(env.Path("run.sh"), 0o755))
	require.Equal(t, "k2", env.Checkpoint("--agent=a1"))
	env.Write("a.txt", "last\n")
	require.Equal(t, "k3", env.Checkpoint("--agent=a1"))
	return env
}

func TestDiff_BetweenCheckpointsMatchesGit(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	var got diffResult
	env.Venom("diff", "--agent=a1", "--from=k1", "--to=k2", "--json").OK(t).JSON(t, &got)
	want := gitFiles(t, env, "refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2")
	assert.Equal(t, want, got.Files)
	assert.Nil(t, got.Patch, "no patch without --path")
	assert.Len(t, got.Files, 5)
	assert.Contains(t, got.Files, diffFile{Repo: ".", Path: "bin.dat", Change: "modify", Binary: true})
	assert.Contains(t, got.Files, diffFile{Repo: ".", Path: "gone.txt", Change: "delete", Removed: 1})
	assert.Contains(t, got.Files, diffFile{Repo: ".", Path: "dir/new.txt", Change: "create", Added: 1})

	// The short form, with the only agent found by itself.
	var short diffResult
	env.Venom("diff", "k1", "k2", "--json").OK(t).JSON(t, &short)
	assert.Equal(t, got, short)

	// Nothing between a checkpoint and itself.
	m := env.Venom("diff", "k2", "k2", "--json").OK(t).Map(t)
	assert.Equal(t, map[string]any{"files": []any{}}, m)
}

func TestDiff_AgainstTheCurrentFilesWritesNothing(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Write("a.txt", "now\n")
	env.Write("untracked.txt", "u\n")
	env.Write(".gitignore", "*.log\n")
	env.Write("x.log", "ignored\n")
	snap := env.Snapshot()
	refs := env.Git("for-each-ref", "refs/venom")
	records := len(env.LogRecords())

	var got diffResult
	env.Venom("diff", "--from=k3", "--json").OK(t).JSON(t, &got)
	assert.Equal(t, gitFiles(t, env, "refs/venom/checkpoints/a1/3", env.RecipeTree()), got.Files)
	paths := []string{}
	for _, f := range got.Files {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{".gitignore", "a.txt", "untracked.txt"}, paths)

	env.AssertUntouched(t, snap)
	assert.Equal(t, refs, env.Git("for-each-ref", "refs/venom"), "a diff made a ref")
	assert.Len(t, env.LogRecords(), records, "a diff wrote the log")
	entries, _ := os.ReadDir(filepath.Join(env.Dir, ".git", "venom", "tmp"))
	assert.Empty(t, entries, "a temporary index was left behind")
}

func TestDiff_PathPatchIsCutAtTheLimit(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	var got diffResult
	env.Venom("diff", "k1", "k2", "--path=a.txt", "--json").OK(t).JSON(t, &got)
	require.NotNil(t, got.Patch)
	assert.Equal(t, []diffFile{{Repo: ".", Path: "a.txt", Change: "modify", Added: 2, Removed: 1}}, got.Files)
	full := env.Git("diff-tree", "-p", "--full-index", "refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2", "--", "a.txt") + "\n"
	assert.Equal(t, full, got.Patch.Text)
	assert.False(t, got.Patch.Truncated)
	assert.Equal(t, len(full), got.Patch.Bytes)

	// A folder path narrows the files too.
	var dir diffResult
	env.Venom("diff", "k1", "k2", "--path=dir", "--json").OK(t).JSON(t, &dir)
	assert.Equal(t, []diffFile{{Repo: ".", Path: "dir/new.txt", Change: "create", Added: 1}}, dir.Files)

	// venom.diffMaxBytes cuts the text at the end of a line.
	env.Git("config", "--global", "venom.diffMaxBytes", "100")
	var cut diffResult
	env.Venom("diff", "k1", "k2", "--path=a.txt", "--json").OK(t).JSON(t, &cut)
	require.NotNil(t, cut.Patch)
	assert.True(t, cut.Patch.Truncated)
	assert.Equal(t, len(full), cut.Patch.Bytes)
	assert.LessOrEqual(t, len(cut.Patch.Text), 100)
	assert.True(t, strings.HasPrefix(full, cut.Patch.Text))
	assert.True(t, strings.HasSuffix(cut.Patch.Text, "\n"))

	env.Venom("diff", "k1", "--path=../outside", "--json").Fails(t, 2, "invalid_params.path")
}

func TestDiff_HumanOutputIsGitsStatAndPatch(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	r := env.Venom("diff", "k1", "k2").OK(t)
	want := env.GitRaw("diff-tree", "-r", "--no-renames", "--stat", "--summary", "-p",
		"refs/venom/checkpoints/a1/1", "refs/venom/checkpoints/a1/2").Stdout
	assert.Equal(t, want, r.Stdout)
	assert.NotContains(t, r.Stdout, "\x1b[", "colour in piped output")
	assert.Contains(t, r.Stdout, "5 files changed")

	r = env.Venom("diff", "k2", "k2").OK(t)
	assert.Equal(t, "No changes between k2 and k2.\n", r.Stdout)
}

func TestDiff_UnknownPrunedOrMovedIsNotFound(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Venom("diff", "k9", "--json").Fails(t, 3, "not_found.checkpoint")
	env.Venom("diff", "k1", "k9", "--json").Fails(t, 3, "not_found.checkpoint")
	env.Venom("diff", "x1", "--json").Fails(t, 2, "invalid_params.checkpoint")
	env.Venom("diff", "--json").Fails(t, 2, "invalid_params.checkpoint") // as a bare rollback
	env.Venom("diff", "k1", "--repo=other", "--json").Fails(t, 3, "not_found.checkpoint")
	env.Venom("diff", "--agent=nobody", "k1", "--json").Fails(t, 3, "not_found.agent")

	// A ref moved to another commit, or deleted, no longer counts (docs/checkpoints.md#the-log).
	env.Git("update-ref", "refs/venom/checkpoints/a1/2", "refs/venom/checkpoints/a1/3")
	m := env.Venom("diff", "k1", "k2", "--json").Fails(t, 3, "not_found.checkpoint").Map(t)
	assert.Equal(t, map[string]any{"checkpoint": "k2", "repo": "."}, m["error"].(map[string]any)["data"])
	env.Git("update-ref", "-d", "refs/venom/checkpoints/a1/1")
	env.Venom("diff", "k1", "--json").Fails(t, 3, "not_found.checkpoint")
	env.Venom("diff", "k3", "--json").OK(t)
}

func TestDiff_TerminalOutputIsColouredAndPaged(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Extra = []string{`GIT_PAGER=printf 'LESS=%s\n' "$LESS"; sed s/^/PAGED:/`}
	screen, code := env.ptyRun(t, nil, "diff", "k1", "k2")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "LESS=FRX")
	assert.Contains(t, screen, "PAGED: a.txt")
	assert.Contains(t, screen, "\x1b[", "no colour on a terminal")
	assert.Contains(t, screen, "PAGED:\x1b[1mdiff --git a/a.txt b/a.txt")

	// GIT_PAGER=cat: no pager, still coloured.
	env.Extra = []string{"GIT_PAGER=cat"}
	screen, code = env.ptyRun(t, nil, "diff", "k1", "k2")
	require.Equal(t, 0, code, screen)
	assert.NotContains(t, screen, "PAGED:")
	assert.Contains(t, screen, "\x1b[")
}
