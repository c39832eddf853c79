package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// conflictingTurns is a repository whose agent a1's t1 rewrote lines
// 14-16 of f.txt and t2 then rewrote line 15 again: reverting t1 meets
// t2 on those lines. extra files go into the first commit too.
func conflictingTurns(t *testing.T, extra map[string]string) (env *Env, t1, t2 map[int]string) {
	t.Helper()
	t1 = map[int]string{14: "t1 wrote line 14", 15: "t1 wrote line 15", 16: "t1 wrote line 16"}
	t2 = map[int]string{15: "t2 wrote line 15"}
	files := map[string]string{"f.txt": revLines(30, nil)}
	for p, c := range extra {
		files[p] = c
	}
	env = revertBase(t, files)
	env.Turn("a1", func() { env.Write("f.txt", revLines(30, t1)) })
	env.Turn("a1", func() { env.Write("f.txt", revLines(30, t2)) })
	return env, t1, t2
}

// TestRevert_PlanNamesWhatTheMergeWrites: the merge follows settings S's
// tree does not hold (merge.conflictStyle, a conflict-marker-size in
// .git/info/attributes). Changed between the dry run and the real call,
// the plan quoted is stale and nothing is written; the dry run shown
// again writes what it shows. A change that alters no merged byte leaves
// the plan good.
func TestRevert_PlanNamesWhatTheMergeWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(env *Env)
		opts   []string // git merge-file's for the file then written
	}{
		{"conflictStyle", func(env *Env) { env.Git("config", "merge.conflictStyle", "diff3") }, []string{"--diff3"}},
		{"conflict-marker-size", func(env *Env) {
			info := env.Path(strings.TrimSpace(env.Git("rev-parse", "--git-path", "info")))
			require.NoError(t, os.MkdirAll(info, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(info, "attributes"), []byte("f.txt conflict-marker-size=12\n"),
				0o644))
		}, []string{"--marker-size=12"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, t1, t2 := conflictingTurns(t, nil)
			args := []string{"--revert=t1", "--conflicts=markers"}
			dry := env.revertDry(args...)
			tc.change(env)
			before, refs := env.Git("hash-object", "f.txt"), env.Git("for-each-ref", "refs/venom")
			r := env.Venom("rollback", append(args, "--plan="+dry.Plan, "--json")...).Fails(t, 5, "conflict.rollback_stale")
			require.Contains(t, r.Stdout, "merge.conflictStyle", r.Stdout)
			require.Equal(t, before, env.Git("hash-object", "f.txt"), "the stale plan wrote")
			require.Equal(t, revLines(30, t2), env.Read("f.txt"))
			require.Equal(t, refs, env.Git("for-each-ref", "refs/venom"), "no safety checkpoint")

			human := env.Venom("rollback", append(args, "--plan="+dry.Plan)...)
			require.Equal(t, 5, human.Code)
			require.Contains(t, human.Stderr, "conflict-marker-size")

			// Shown again, the plan writes what git merge-file writes now.
			res := env.revert(args...)
			want := mergeFile(t, env, revLines(30, t2), revLines(30, t1), revLines(30, nil), res.Revert.From,
				res.Revert.To, "t1", tc.opts...)
			require.Equal(t, 1, want.Code, want.Stderr)
			require.Equal(t, want.Stdout, env.Read("f.txt"))
		})
	}
	t.Run("no merged byte changes", func(t *testing.T) {
		t.Parallel()
		// Reverting t2 merges its line 15 back cleanly past t3's line 27:
		// no marker, so the style does not change what is written.
		env := revertRepo(t)
		dry := env.revertDry("--revert=t2", "--conflicts=markers")
		require.Equal(t, "modify:reverted", dry.classes()["f.txt"])
		env.Git("config", "merge.conflictStyle", "zdiff3")
		rollbackJSON[RevertResult](env, []string{"--revert=t2", "--conflicts=markers"}, "--plan="+dry.Plan)
		require.Equal(t, revLines(30, map[int]string{3: "t1 wrote line 3", 27: "t3 wrote line 27"}), env.Read("f.txt"))
	})
}

// TestRevert_MarkersOfTheAttributesSize: a conflict-marker-size
// attribute sets the markers' length, as git's own merge honours it (git
// revert of the same commits, byte for byte but for the labels, and git
// merge-file --marker-size with a revert's); the dry run's markers name
// the long marker lines.
func TestRevert_MarkersOfTheAttributesSize(t *testing.T) {
	t.Parallel()
	labelless := regexp.MustCompile(`(?m)^(<{10}|\|{10}|>{10}) .*$`)
	for _, style := range []string{"merge", "diff3"} {
		t.Run(style, func(t *testing.T) {
			t.Parallel()
			attrs := "f.txt conflict-marker-size=10\n"
			env, t1, t2 := conflictingTurns(t, map[string]string{".gitattributes": attrs})
			env.Git("config", "merge.conflictStyle", style)
			args := []string{"--revert=t1", "--conflicts=markers"}
			dry := env.revertDry(args...)
			res := env.revert(args...)
			got := env.Read("f.txt")

			var opts []string
			if style == "diff3" {
				opts = []string{"--diff3"}
				require.Contains(t, got, "\n|||||||||| a1/", got)
			}
			want := mergeFile(t, env, revLines(30, t2), revLines(30, t1), revLines(30, nil), res.Revert.From,
				res.Revert.To, "t1", append(opts, "--marker-size=10")...)
			require.Equal(t, 1, want.Code, want.Stderr)
			require.Equal(t, want.Stdout, got)
			require.Contains(t, got, "\n<<<<<<<<<< current\n", got)
			require.Contains(t, got, "\n==========\n", got)

			// git revert of the same three states, the attribute in its
			// tree.
			gitWrote := gitRevertWrites(t, env, style, attrs, revLines(30, nil), revLines(30, t1), revLines(30, t2))
			require.Equal(t, labelless.ReplaceAllString(gitWrote, "$1"), labelless.ReplaceAllString(got, "$1"))

			lines := strings.Split(got, "\n")
			require.Len(t, dry.Repos[0].Files[0].Markers, 1)
			m := dry.Repos[0].Files[0].Markers[0]
			require.True(t, strings.HasPrefix(lines[m.Start-1], "<<<<<<<<<< current"), got)
			require.True(t, strings.HasPrefix(lines[m.End-1], ">>>>>>>>>> a1/"), got)
		})
	}
}

// TestRevert_StaleNamesTheMergeWhenItNoLongerMerges: a merge attribute
// set after the dry run leaves the file whole where the dry run merged
// its lines; the stale plan's error names the merge's settings, not only
// the tree, HEAD and choices, none of which changed.
func TestRevert_StaleNamesTheMergeWhenItNoLongerMerges(t *testing.T) {
	t.Parallel()
	env, _, _ := conflictingTurns(t, nil)
	args := []string{"--revert=t1", "--conflicts=markers"}
	dry := env.revertDry(args...)
	info := env.Path(strings.TrimSpace(env.Git("rev-parse", "--git-path", "info")))
	require.NoError(t, os.MkdirAll(info, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(info, "attributes"), []byte("f.txt merge=binary\n"), 0o644))
	r := env.Venom("rollback", append(args, "--plan="+dry.Plan, "--json")...).Fails(t, 5, "conflict.rollback_stale")
	require.Contains(t, r.Stdout, "merge.conflictStyle, the merge", r.Stdout)
}
