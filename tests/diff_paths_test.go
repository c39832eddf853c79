package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// git venom-diff's paths are git's pathspecs, checked
// against plain git diff on the checkpoints' refs.

const (
	ref1 = "refs/venom/checkpoints/a1/1"
	ref2 = "refs/venom/checkpoints/a1/2"
	ref3 = "refs/venom/checkpoints/a1/3"
)

// namesOf lists the paths of a JSON diff.
func namesOf(r diffResult) []string {
	out := []string{}
	for _, f := range r.Files {
		out = append(out, f.Path)
	}
	return out
}

// gitNames is plain git's answer: git diff --name-only, as lines.
func gitNames(t *testing.T, env *Env, dir string, args ...string) []string {
	t.Helper()
	r := env.run(dir, nil, "git", append([]string{"diff", "--no-renames", "--name-only"}, args...)...)
	assert.Equal(t, 0, r.Code, r.Stderr)
	out := []string{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestDiffPaths_NoChangeThereSaysSoAmongOtherChanges(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	// Between k2 and k3 only a.txt changed.
	assert.Empty(t, gitNames(t, env, env.Dir, ref2, ref3, "--", "run.sh"))
	r := env.Venom("diff", "k2", "k3", "--path=run.sh").OK(t)
	assert.Equal(t, "No changes to run.sh between k2 and k3; 1 file changed elsewhere.\n", r.Stdout)
	var got diffResult
	env.Venom("diff", "k2", "k3", "--path=run.sh", "--json").OK(t).JSON(t, &got)
	assert.Empty(t, got.Files)

	r = env.Venom("diff", "k3", "k3", "--path=run.sh").OK(t)
	assert.Equal(t, "No changes to run.sh between k3 and k3, nor anywhere else.\n", r.Stdout)
	r = env.Venom("diff", "k3", "k3").OK(t)
	assert.Equal(t, "No changes between k3 and k3.\n", r.Stdout)
}

func TestDiffPaths_RelativeToTheCurrentFolderAsGit(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	dir := env.Path("dir")
	for _, spec := range [][]string{
		{"new.txt"}, {"."}, {"../a.txt"}, {"../a.txt", "new.txt"}, {":/a.txt"}, {":(top)run.sh"},
		{".."}, {"../*.txt"}, {":(glob)../*.txt"}, {":/", ":!new.txt"},
	} {
		want := gitNames(t, env, dir, append([]string{ref1, ref2, "--"}, spec...)...)
		var got diffResult
		args := []string{"diff", "k1", "k2", "--json"}
		for _, p := range spec {
			args = append(args, "--path="+p)
		}
		env.VenomIn(dir, nil, args[0], args[1:]...).OK(t).JSON(t, &got)
		assert.Equal(t, want, namesOf(got), "--path %v from dir/", spec)
		var dashed diffResult
		env.VenomIn(dir, nil, "diff", append([]string{"k1", "k2", "--json", "--"}, spec...)...).OK(t).JSON(t, &dashed)
		assert.Equal(t, want, namesOf(dashed), "-- %v from dir/", spec)
	}
	// Outside the tree, or into .git, is refused as git refuses it.
	env.VenomIn(dir, nil, "diff", "k1", "--path=../../x", "--json").Fails(t, 2, "invalid_params.path")
	assert.NotEqual(t, 0, env.run(dir, nil, "git", "diff", ref1, "--", "../../x").Code)
	env.Venom("diff", "k1", "--path=.git/config", "--json").Fails(t, 2, "invalid_params.path")
	env.Venom("diff", "k1", "--json", "--", "").Fails(t, 2, "invalid_params.path")
}

func TestDiffPaths_RepeatedPathsAreAllKept(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	var got diffResult
	env.Venom("diff", "k1", "k2", "--path=a.txt", "--path=dir", "--json").OK(t).JSON(t, &got)
	assert.Equal(t, gitNames(t, env, env.Dir, ref1, ref2, "--", "a.txt", "dir"), namesOf(got))
	assert.Equal(t, []string{"a.txt", "dir/new.txt"}, namesOf(got))
	// A comma is part of a path, not a separator.
	env.Write("x,y.txt", "comma\n")
	env.Checkpoint("--agent=a1")
	env.Venom("diff", "k3", "k4", "--path=x,y.txt", "--json").OK(t).JSON(t, &got)
	assert.Equal(t, []string{"x,y.txt"}, namesOf(got))
	// The patch covers every path named.
	env.Venom("diff", "k1", "k2", "--json", "--", "a.txt", "run.sh").OK(t).JSON(t, &got)
	want := env.GitRaw("diff-tree", "-p", "--full-index", ref1, ref2, "--", "a.txt", "run.sh").Stdout
	if assert.NotNil(t, got.Patch) {
		assert.Equal(t, want, got.Patch.Text)
	}
}

func TestDiffPaths_DoubleDashAndShortFormsAsGitDiff(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	// k1 against the current files: a.txt is "last\n" now.
	r := env.Venom("diff", "k1", "--name-only", "--", "a.txt").OK(t)
	assert.Equal(t, "a.txt\n", r.Stdout)
	r = env.Venom("diff", "k1", "--", "a.txt").OK(t)
	want := env.GitRaw("diff", "--no-renames", "--stat", "--summary", "-p", ref1, "--", "a.txt").Stdout
	assert.Equal(t, want, r.Stdout, "git diff --stat -p of the working file")

	for _, tc := range []struct {
		ours []string
		git  []string
	}{
		{[]string{"k1", "k2"}, []string{"--stat", "--summary", "-p", ref1, ref2}},
		{[]string{"k1", "k2", "--", "a.txt", "dir"}, []string{"--stat", "--summary", "-p", ref1, ref2, "--", "a.txt", "dir"}},
		{[]string{"k1", "k2", "--stat"}, []string{"--stat", ref1, ref2}},
		{[]string{"--stat", "k1", "k2", "--", "dir"}, []string{"--stat", ref1, ref2, "--", "dir"}},
		{[]string{"k1", "k2", "--name-only"}, []string{"--name-only", ref1, ref2}},
		{[]string{"k1", "k3", "--name-only", "--path=a.txt"}, []string{"--name-only", ref1, ref3, "--", "a.txt"}},
	} {
		r := env.Venom("diff", tc.ours...).OK(t)
		want := env.GitRaw(append([]string{"diff", "--no-renames"}, tc.git...)...)
		assert.Equal(t, 0, want.Code)
		assert.Equal(t, want.Stdout, r.Stdout, "git venom-diff %v", tc.ours)
	}
	env.Venom("diff", "k1", "--stat", "--name-only").Fails(t, 2, "invalid_params.usage")
}
