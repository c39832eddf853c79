package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RevertResult is a revert's result as the tests read it: a rollback's,
// with the revert member and a conflict's lines.
type RevertResult struct {
	Checkpoint string `json:"checkpoint"`
	DryRun     bool   `json:"dry_run"`
	Plan       string `json:"plan"`
	Restore    string `json:"restore"`
	Safety     string `json:"safety"`
	Exact      *bool  `json:"exact"`
	Revert     struct {
		Turn      *string `json:"turn"`
		From      string  `json:"from"`
		To        string  `json:"to"`
		Conflicts string  `json:"conflicts"`
	} `json:"revert"`
	Conversation struct {
		Rewinds bool     `json:"rewinds"`
		Drops   []string `json:"drops"`
	} `json:"conversation"`
	Repos []struct {
		Head struct {
			Moves bool `json:"moves"`
		} `json:"head"`
		Files []struct {
			Path    string      `json:"path"`
			Change  string      `json:"change"`
			Class   string      `json:"class"`
			By      string      `json:"by"`
			Lines   []lineRange `json:"lines"`
			Markers []lineRange `json:"markers"`
		} `json:"files"`
		Left []struct {
			Path   string  `json:"path"`
			Reason string  `json:"reason"`
			Detail *string `json:"detail"`
		} `json:"left"`
		IgnoredEdits []string `json:"ignored_edits"`
	} `json:"repos"`
}

type lineRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// classes is path → class for the files, path → "left:<reason>" for the
// paths left.
func (r RevertResult) classes() map[string]string {
	m := map[string]string{}
	for _, f := range r.Repos[0].Files {
		m[f.Path] = f.Change + ":" + f.Class
	}
	for _, l := range r.Repos[0].Left {
		m[l.Path] = "left:" + l.Reason
	}
	return m
}

func (e *Env) revertDry(args ...string) RevertResult {
	e.t.Helper()
	res := rollbackJSON[RevertResult](e, args, "--dry-run")
	require.True(e.t, res.DryRun)
	return res
}

func (e *Env) revert(args ...string) RevertResult {
	e.t.Helper()
	plan := e.revertDry(args...).Plan
	res := rollbackJSON[RevertResult](e, args, "--plan="+plan)
	require.False(e.t, res.DryRun)
	return res
}

// refusedConflicts is the conflicts a conflict.revert_conflicts refusal
// names, each as JSON has it.
func refusedConflicts(t *testing.T, r Result) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, c := range r.Map(t)["error"].(map[string]any)["data"].(map[string]any)["conflicts"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

// gitMergeFile is git merge-file -p with opts, of the three contents
// written to files of their own.
func gitMergeFile(t *testing.T, env *Env, opts []string, ours, base, theirs string) Result {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	args := append(append([]string{"merge-file", "-p"}, opts...), write("ours", ours), write("base", base),
		write("theirs", theirs))
	return env.GitRaw(args...)
}

// mergeFile is git merge-file -p of the three contents with a revert's
// labels for the pair from..to of turn, in git's default conflict style
// (no base section): what a revert with --conflicts=markers must write,
// byte for byte, in a repository that sets no merge.conflictStyle. opts
// go first (--diff3, --zdiff3).
func mergeFile(t *testing.T, env *Env, ours, base, theirs, from, to, turn string, opts ...string) Result {
	t.Helper()
	return gitMergeFile(t, env, append(opts, "-L", "current", "-L", "a1/"+to+" (after "+turn+")",
		"-L", "a1/"+from+" (before "+turn+")"), ours, base, theirs)
}

// revLines is a file of n numbered lines, with line i replaced where edits
// say.
func revLines(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := edits[i]; ok {
			b.WriteString(s + "\n")
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

// revertBase is a repository whose first commit holds files, and an
// agent a1 in its own tree (unguarded), registered with a checkpoint of
// them: where a revert test's turns start.
func revertBase(t *testing.T, files map[string]string) *Env {
	t.Helper()
	env := NewEnv(t)
	for p, content := range files {
		env.Write(p, content)
	}
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
	return env
}

// revertRepo is a committed 30-line file f.txt and an agent a1 in its
// own tree (unguarded), with three turns: t1 edits line 3, t2 line 15,
// t3 line 27.
func revertRepo(t *testing.T) *Env {
	env := revertBase(t, map[string]string{"f.txt": revLines(30, nil)})
	edits := map[int]string{}
	for i, n := range []int{3, 15, 27} {
		env.Turn("a1", func() {
			edits[n] = fmt.Sprintf("t%d wrote line %d", i+1, n)
			env.Write("f.txt", revLines(30, edits))
		})
	}
	return env
}

// rewrittenRepo is revertRepo with a fourth turn that rewrote t2's line
// 15, and the lines the file then has.
func rewrittenRepo(t *testing.T) (*Env, map[int]string) {
	env := revertRepo(t)
	edits := map[int]string{3: "t1 wrote line 3", 15: "t4 rewrote line 15", 27: "t3 wrote line 27"}
	env.Turn("a1", func() { env.Write("f.txt", revLines(30, edits)) })
	return env, edits
}

// TestRevert_KeepsLaterTurns: reverting t2 takes back its hunk and keeps
// t1's and t3's, as git revert would; HEAD, the index and the
// conversation stay; --undo puts the tree back exactly.
func TestRevert_KeepsLaterTurns(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	before := env.RecipeTree()
	snap := env.Snapshot()

	dry := env.revertDry("--revert=t2")
	require.Equal(t, "t2", *dry.Revert.Turn)
	require.Equal(t, "refuse", dry.Revert.Conflicts)
	require.Equal(t, "files", dry.Restore)
	require.Equal(t, dry.Revert.To, dry.Checkpoint)
	require.Equal(t, map[string]string{"f.txt": "modify:reverted"}, dry.classes())
	require.False(t, dry.Repos[0].Head.Moves)
	require.False(t, dry.Conversation.Rewinds)
	require.Equal(t, before, env.RecipeTree(), "the dry run wrote nothing")

	res := env.revert("--revert=t2")
	require.True(t, *res.Exact)
	require.NotEmpty(t, res.Safety)
	require.Equal(t, revLines(30, map[int]string{3: "t1 wrote line 3", 27: "t3 wrote line 27"}), env.Read("f.txt"))
	after := env.Snapshot()
	after.Files = snap.Files // the one thing a revert changes
	require.Equal(t, snap, after, "HEAD, the index, refs, config or stash changed")
	// Plain git: the file differs from HEAD's by t1's and t3's lines only.
	diff := env.Git("diff", "--unified=0", "HEAD", "--", "f.txt")
	assert.Contains(t, diff, "+t1 wrote line 3")
	assert.Contains(t, diff, "+t3 wrote line 27")
	assert.NotContains(t, diff, "line 15")

	ended := env.Records("rollback.ended")
	require.Equal(t, "t2", ended[len(ended)-1]["revert"])
	require.Equal(t, "files", ended[len(ended)-1]["restore"])
	events := env.Venom("checkpoint", "events", "--types=agent.rollback_started,agent.rollback_ended", "--json").OK(t).Stdout
	assert.Equal(t, 2, strings.Count(events, `"revert":"t2"`), events)
	human := env.Venom("checkpoint", "events", "--types=agent.rollback_started,agent.rollback_ended").OK(t).Stdout
	assert.Equal(t, 2, strings.Count(human, "revert t2"), human)

	env.Rollback("--undo", "--restore=files")
	require.Equal(t, before, env.RecipeTree())
}

// TestRevert_SameLinesConflict: a later turn rewrote the turn's line:
// refused by default with the line named; --conflicts=markers writes
// what git merge-file writes for the same three files.
func TestRevert_SameLinesConflict(t *testing.T) {
	t.Parallel()
	env, _ := rewrittenRepo(t)
	before := env.RecipeTree()
	ours := env.Read("f.txt")

	r := env.Venom("rollback", "--revert=t2", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
	data := r.Map(t)["error"].(map[string]any)["data"].(map[string]any)
	require.Equal(t, "t2", data["revert"])
	c := data["conflicts"].([]any)[0].(map[string]any)
	require.Equal(t, "f.txt", c["path"])
	require.Equal(t, "later_turn", c["by"], r.Stdout)
	require.Equal(t, []any{"t4"}, c["turns"], "the later turn whose change the revert meets")
	require.Equal(t, []any{map[string]any{"start": 15.0, "end": 15.0}}, c["lines"])
	human := env.Venom("rollback", "--revert=t2", "--dry-run")
	require.Equal(t, 5, human.Code)
	require.Contains(t, human.Stderr, "f.txt")
	require.Contains(t, human.Stderr, "line 15 changed by turn t4")
	require.Contains(t, human.Stderr, "--conflicts=markers")

	dry := env.revertDry("--revert=t2", "--conflicts=markers")
	f := dry.Repos[0].Files[0]
	require.Equal(t, "conflict", f.Class)
	require.Equal(t, "later_turn", f.By)
	require.Equal(t, []lineRange{{15, 15}}, f.Lines)
	require.Len(t, f.Markers, 1)
	require.Equal(t, before, env.RecipeTree())

	res := env.revert("--revert=t2", "--conflicts=markers")
	require.True(t, *res.Exact)
	got := env.Read("f.txt")
	require.Contains(t, got, "<<<<<<< current\n")

	// The same merge by git: ours the current file, base the turn's end,
	// theirs its start, with the same labels.
	base := env.Git("show", env.CheckpointTreeOf("a1", dry.Revert.To)+":f.txt") + "\n"
	theirs := env.Git("show", env.CheckpointTreeOf("a1", dry.Revert.From)+":f.txt") + "\n"
	want := mergeFile(t, env, ours, base, theirs, dry.Revert.From, dry.Revert.To, "t2")
	require.Equal(t, 1, want.Code, want.Stderr) // one conflict
	require.Equal(t, want.Stdout, got)
	m := f.Markers[0]
	gotLines := strings.Split(got, "\n")
	require.True(t, strings.HasPrefix(gotLines[m.Start-1], "<<<<<<< "))
	require.True(t, strings.HasPrefix(gotLines[m.End-1], ">>>>>>> "))

	env.Rollback("--undo", "--restore=files")
	require.Equal(t, before, env.RecipeTree())
}

// TestRevert_MarkersFollowConflictStyle: the markers are in the style
// merge.conflictStyle names, as git revert's are: no base section by
// default or with merge, the base's lines with diff3, and with zdiff3
// the lines both sides share moved out of the conflict; byte for byte
// what git merge-file writes in that style. A style git does not know
// is refused, as git refuses it, and nothing is written.
func TestRevert_MarkersFollowConflictStyle(t *testing.T) {
	t.Parallel()
	// t1 rewrote lines 14-16; t2 put back 14 and 16 and rewrote 15: the
	// revert of t1 conflicts on the three lines, of which current and
	// t1's start share the first and the last (what zdiff3 moves out).
	t1 := map[int]string{14: "t1 wrote line 14", 15: "t1 wrote line 15", 16: "t1 wrote line 16"}
	t2 := map[int]string{15: "t2 wrote line 15"}
	for _, tc := range []struct{ style, flag, base string }{
		{"", "", ""},
		{"merge", "", ""},
		{"diff3", "--diff3", "||||||| a1/"},
		{"zdiff3", "--zdiff3", "||||||| a1/"},
	} {
		t.Run("style="+tc.style, func(t *testing.T) {
			t.Parallel()
			env := revertBase(t, map[string]string{"f.txt": revLines(30, nil)})
			env.Turn("a1", func() { env.Write("f.txt", revLines(30, t1)) })
			env.Turn("a1", func() { env.Write("f.txt", revLines(30, t2)) })
			if tc.style != "" {
				env.Git("config", "merge.conflictStyle", tc.style)
			}
			dry := env.revertDry("--revert=t1", "--conflicts=markers")
			res := env.revert("--revert=t1", "--conflicts=markers")
			var opts []string
			if tc.flag != "" {
				opts = []string{tc.flag}
			}
			want := mergeFile(t, env, revLines(30, t2), revLines(30, t1), revLines(30, nil), res.Revert.From,
				res.Revert.To, "t1", opts...)
			require.Equal(t, 1, want.Code, want.Stderr)
			got := env.Read("f.txt")
			require.Equal(t, want.Stdout, got)
			if tc.base == "" {
				require.NotContains(t, got, "|||||||")
			} else {
				require.Contains(t, got, tc.base)
			}
			if tc.style == "zdiff3" {
				require.Contains(t, got, "line 14\n<<<<<<< current\n", "the shared line is out of the conflict")
			}
			// The markers the dry run names are where the real call wrote them.
			lines := strings.Split(got, "\n")
			require.Len(t, dry.Repos[0].Files[0].Markers, 1)
			m := dry.Repos[0].Files[0].Markers[0]
			require.True(t, strings.HasPrefix(lines[m.Start-1], "<<<<<<< "), got)
			require.True(t, strings.HasPrefix(lines[m.End-1], ">>>>>>> "), got)
		})
	}
	t.Run("style=unknown", func(t *testing.T) {
		t.Parallel()
		env := revertBase(t, map[string]string{"f.txt": revLines(30, nil)})
		env.Turn("a1", func() { env.Write("f.txt", revLines(30, t1)) })
		env.Turn("a1", func() { env.Write("f.txt", revLines(30, t2)) })
		env.Git("config", "merge.conflictStyle", "Diff3")
		before := env.RecipeTree()
		// git refuses the value too.
		require.NotEqual(t, 0, env.GitRaw("merge-file", "-p", "f.txt", "f.txt", "f.txt").Code)
		r := env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--dry-run", "--json").
			Fails(t, 2, "invalid_params.config")
		require.Contains(t, r.Stdout, "merge.conflictStyle", r.Stdout)
		human := env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--dry-run")
		require.Equal(t, 2, human.Code)
		require.Contains(t, human.Stderr, `unknown style "Diff3"`)
		require.Equal(t, before, env.RecipeTree())
	})
}

// TestRevert_MarkersAsGitRevertWrites: in each style the file is what
// git revert of the same change writes, labels aside, where git
// merge-file would differ: two conflicts a line of few letters apart
// ("}") stay two, as git revert leaves them, where merge-file joins
// them in git's default style.
func TestRevert_MarkersAsGitRevertWrites(t *testing.T) {
	t.Parallel()
	// Lines 11-14 are "}" throughout: two conflicts more than three
	// lines apart, the lines between them without a letter or digit.
	closing := func(m map[int]string) map[int]string {
		for i := 11; i <= 14; i++ {
			m[i] = "}"
		}
		return m
	}
	t1 := closing(map[int]string{10: "t1 wrote line 10", 15: "t1 wrote line 15"})
	t2 := closing(map[int]string{10: "t2 wrote line 10", 15: "t2 wrote line 15"})
	start := revLines(30, closing(map[int]string{}))
	// labelless is the file with each marker line's label cut.
	labelless := regexp.MustCompile(`(?m)^(<<<<<<<|\|\|\|\|\|\|\||>>>>>>>) .*$`)
	for _, style := range []string{"merge", "diff3", "zdiff3"} {
		t.Run(style, func(t *testing.T) {
			t.Parallel()
			env := revertBase(t, map[string]string{"f.txt": start})
			env.Turn("a1", func() { env.Write("f.txt", revLines(30, t1)) })
			env.Turn("a1", func() { env.Write("f.txt", revLines(30, t2)) })
			env.Git("config", "merge.conflictStyle", style)
			env.revert("--revert=t1", "--conflicts=markers")
			got := env.Read("f.txt")

			// The same three files as commits of a repository of their
			// own, and git revert of the turn's.
			want := gitRevertWrites(t, env, style, "", start, revLines(30, t1), revLines(30, t2))
			require.Equal(t, labelless.ReplaceAllString(want, "$1"), labelless.ReplaceAllString(got, "$1"))
			require.Equal(t, 2, strings.Count(got, "<<<<<<< "), got)
			if style == "merge" {
				mf := mergeFile(t, env, revLines(30, t2), revLines(30, t1), start, "k", "k", "t1")
				require.Equal(t, 1, strings.Count(mf.Stdout, "<<<<<<< "), "git merge-file joins them:\n%s", mf.Stdout)
			}
		})
	}
}

// TestRevert_PersonsEdit: a person's edit after the turn, in another
// hunk, is kept and the turn's taken back; in the turn's hunk it is a
// conflict the person made.
func TestRevert_PersonsEdit(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	env.Write("f.txt", revLines(30, map[int]string{3: "t1 wrote line 3", 15: "t2 wrote line 15",
		27: "t3 wrote line 27", 22: "a person wrote line 22"}))
	env.revert("--revert=t2")
	require.Equal(t, revLines(30, map[int]string{3: "t1 wrote line 3", 27: "t3 wrote line 27",
		22: "a person wrote line 22"}), env.Read("f.txt"))

	env.Write("f.txt", revLines(30, map[int]string{3: "a person rewrote line 3", 27: "t3 wrote line 27",
		22: "a person wrote line 22"}))
	r := env.Venom("rollback", "--revert=t1", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
	c := refusedConflicts(t, r)[0]
	require.Equal(t, "person", c["by"])
	require.Equal(t, []any{}, c["turns"], "no later turn changed line 3")
	require.Equal(t, []any{map[string]any{"start": 3.0, "end": 3.0}}, c["lines"])
}

// TestRevert_Shapes: a file the turn created goes, one it deleted comes
// back, its mode change is taken back beside a later edit's lines; a file
// already as the turn found it is left; a binary file changed since, and
// a created file changed since, are whole-file conflicts.
func TestRevert_Shapes(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{"gone.txt": "the turn deletes me\n", "run.sh": revLines(10, nil),
		"back.txt": "before\n", "img.bin": "\x00\x01before"})
	env.Turn("a1", func() {
		env.Remove("gone.txt")
		env.Write("new.txt", "the turn made me\n")
		env.Write("made.txt", "the turn made me too\n")
		require.NoError(t, os.Chmod(env.Path("run.sh"), 0o755))
		env.Write("back.txt", "during t1\n")
		env.Write("img.bin", "\x00\x01t1")
	})
	env.Turn("a1", func() {
		env.Write("run.sh", revLines(10, map[int]string{9: "t2 wrote line 9"}))
		env.Write("back.txt", "before\n") // t2 undid t1 here already
		env.Write("img.bin", "\x00\x01t2")
		env.Write("made.txt", "t2 changed me\n")
	})
	before := env.RecipeTree()

	r := env.Venom("rollback", "--revert=t1", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
	var conflicted []string
	for _, c := range refusedConflicts(t, r) {
		conflicted = append(conflicted, c["path"].(string))
	}
	require.Equal(t, []string{"img.bin", "made.txt"}, conflicted)

	dry := env.revertDry("--revert=t1", "--conflicts=markers")
	require.Equal(t, map[string]string{
		"gone.txt": "create:reverted", "new.txt": "delete:reverted", "run.sh": "modify:reverted",
		"back.txt": "left:already_reverted", "img.bin": "left:conflict", "made.txt": "left:conflict",
	}, dry.classes())
	res := env.revert("--revert=t1", "--conflicts=markers")
	require.True(t, *res.Exact)
	require.Equal(t, "the turn deletes me\n", env.Read("gone.txt"))
	_, err := os.Lstat(env.Path("new.txt"))
	require.True(t, os.IsNotExist(err))
	require.Equal(t, revLines(10, map[int]string{9: "t2 wrote line 9"}), env.Read("run.sh"))
	require.Equal(t, "100644", strings.Fields(env.Git("ls-files", "-s", "run.sh"))[0], "index untouched")
	fi, err := os.Stat(env.Path("run.sh"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "t1's chmod taken back")
	require.Equal(t, "\x00\x01t2", env.Read("img.bin"))
	require.Equal(t, "t2 changed me\n", env.Read("made.txt"))

	env.Rollback("--undo", "--restore=files")
	require.Equal(t, before, env.RecipeTree())
}

// TestRevert_PairAndPaths: --revert=k<a>..k<b> takes back what changed
// between two checkpoints; -- paths limits it; the plan quotes both.
func TestRevert_PairAndPaths(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	env.Turn("a1", func() {
		env.Write("a.txt", "a from t1\n")
		env.Write("b.txt", "b from t1\n")
	})
	env.Turn("a1", func() { env.Write("c.txt", "c from t2\n") })
	dry := env.revertDry("--revert=t1")
	pair := dry.Revert.From + ".." + dry.Revert.To

	res := env.revert("--revert="+pair, "--path=a.txt")
	require.Nil(t, res.Revert.Turn)
	require.Equal(t, map[string]string{"a.txt": "modify:reverted"}, res.classes())
	require.Equal(t, "a\n", env.Read("a.txt"))
	require.Equal(t, "b from t1\n", env.Read("b.txt"))
	require.Equal(t, "c from t2\n", env.Read("c.txt"))

	// The plan is the revert's: a rollback cannot quote it.
	plan := env.revertDry("--revert=t1").Plan
	env.Venom("rollback", dry.Revert.To, "--restore=files", "--plan="+plan, "--json").Fails(t, 5, "conflict.rollback_stale")
}

// TestRevert_Usage: the choices a revert refuses.
func TestRevert_Usage(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	for _, args := range [][]string{
		{"--revert=t2", "k1"},
		{"--revert=t2", "--undo"},
		{"--revert=t2", "--restore=all"},
		{"--revert=t2", "--outside=keep"},
		{"--revert=k3"},
		{"--revert=t2.1"},
		{"--conflicts=markers", "k1"},
	} {
		env.Venom("rollback", append(args, "--dry-run", "--json")...).Fails(t, 2, "invalid_params.usage")
	}
	env.Venom("rollback", "--revert=t9", "--dry-run", "--json").Fails(t, 3, "not_found.checkpoint")
	env.Venom("rollback", "--revert=last..k1", "--dry-run", "--json").Fails(t, 2, "invalid_params.usage")
}

// TestRevert_Interactive: on a terminal a revert's conflicts offer
// markers; the answer m shows the plan with them and asks; y writes them.
// Any other answer changes nothing.
func TestRevert_Interactive(t *testing.T) {
	t.Parallel()
	env, _ := rewrittenRepo(t)
	before := env.RecipeTree()
	screen, code := env.ptyRun(t, []string{""}, "rollback", "--revert=t2")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "f.txt")
	require.Contains(t, screen, "line 15")
	require.Contains(t, screen, "Nothing was changed.")
	require.Equal(t, before, env.RecipeTree())

	screen, code = env.ptyRun(t, []string{"m", "y"}, "rollback", "--revert=t2")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Revert?")
	require.Contains(t, screen, "Reverted turn t2")
	require.Contains(t, screen, "f.txt lines 15-19")
	require.Contains(t, env.Read("f.txt"), "<<<<<<< current\n")

	out := env.Venom("rollback", "--undo", "--restore=files", "--dry-run").OK(t).Stdout
	require.Contains(t, out, "Undo the revert of t2 of a1")
}

// TestRevert_InteractiveAsksAgainAtMarkers: an answer to [m/N] that is
// neither m nor n is asked again, as git add -p does, never taken for
// No: the screen shows the answer, then the question again, and the next
// answer, m, goes on to the plan with markers.
func TestRevert_InteractiveAsksAgainAtMarkers(t *testing.T) {
	t.Parallel()
	env, _ := rewrittenRepo(t)
	screen, code := env.ptyRun(t, []string{"maybe", "m", "y"}, "rollback", "--revert=t2")
	require.Equal(t, 0, code, screen)
	const again = "Answer m to write the markers or n to stop. [m/N]"
	require.Equal(t, 1, strings.Count(screen, again), screen)
	// The question names the turn, as the refusal without a terminal does.
	require.Contains(t, ansiEscape.ReplaceAllString(screen, ""),
		"Reverting t2 meets later changes in these paths:\r\n  f.txt (", screen)
	asked := strings.Index(screen, "or stop? [m/N]")
	typed := strings.Index(screen, "maybe")
	require.True(t, asked >= 0 && asked < typed && typed < strings.Index(screen, again) &&
		strings.Index(screen, again) < strings.Index(screen, "Revert?"), "asked, typed, asked again, then the plan:\n%s", screen)
	require.NotContains(t, screen, "Nothing was changed.")
	require.Contains(t, screen, "Reverted turn t2")
	require.Contains(t, env.Read("f.txt"), "<<<<<<< current\n")
	require.Equal(t, " M f.txt\x00", env.GitRaw("status", "--porcelain=v1", "-z").Stdout)
}

// TestRevert_InteractiveSaysWhoChangedTheLines: at a terminal the [m/N]
// question says who changed each path's lines, in the words of the
// refusal without a terminal, and keeps within 80 columns.
func TestRevert_InteractiveSaysWhoChangedTheLines(t *testing.T) {
	t.Parallel()
	const p = "src/components/widget/render.txt"
	env := revertBase(t, map[string]string{p: revLines(30, nil)})
	env.Turn("a1", func() { env.Write(p, revLines(30, map[int]string{15: "t1 wrote line 15"})) })
	env.Turn("a1", func() { env.Write(p, revLines(30, map[int]string{15: "t2 rewrote line 15"})) })
	env.Write(p, revLines(30, map[int]string{15: "t2 rewrote line 15", 16: "a person wrote line 16"}))
	const who = "lines 15-16 changed by turn t2 and an edit outside the agent's turns"
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	refused := env.Venom("rollback", "--revert=t1", "--dry-run")
	require.Equal(t, 5, refused.Code, refused.Stderr)
	require.Contains(t, words(strings.ReplaceAll(refused.Stderr, "hint:", "")), who)

	before := env.RecipeTree()
	screen, code := env.ptyRun(t, []string{"n"}, "rollback", "--revert=t1")
	require.Equal(t, 0, code, screen)
	plain := strings.ReplaceAll(ansiEscape.ReplaceAllString(screen, ""), "\r", "")
	question := plain[:strings.Index(plain, "[m/N]")]
	require.Contains(t, words(question), p+" ("+who+")", screen)
	fitsEighty(t, "question", question)
	require.Contains(t, plain, "Nothing was changed.")
	require.Equal(t, before, env.RecipeTree())
}

// TestRevert_MergeAttributes: the merge attribute git's own merge reads
// decides as it would: -merge makes a text file binary to the merge (a
// whole-file conflict), merge=union keeps both sides' lines as git
// merge-file --union does, and a driver a revert does not run conflicts.
func TestRevert_MergeAttributes(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{".gitattributes": "*.dat -merge\n*.log merge=union\n*.cfg merge=mine\n",
		"a.dat": revLines(10, nil), "x.log": revLines(10, nil), "c.cfg": revLines(10, nil)})
	for _, n := range []int{3, 4} {
		env.Turn("a1", func() {
			for _, f := range []string{"a.dat", "x.log", "c.cfg"} {
				edits := map[int]string{4: "t2 wrote line 4"}
				if n == 3 {
					edits = map[int]string{3: "t1 wrote line 3"}
				} else {
					edits[3] = "t1 wrote line 3"
				}
				env.Write(f, revLines(10, edits))
			}
		})
	}
	ours := env.Read("x.log")
	r := env.Venom("rollback", "--revert=t1", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
	details := map[string]string{}
	for _, c := range refusedConflicts(t, r) {
		details[c["path"].(string)] = fmt.Sprint(c["detail"])
	}
	require.Len(t, details, 2, r.Stdout)
	assert.Contains(t, details["a.dat"], "merge attribute")
	assert.Contains(t, details["c.cfg"], "mine")

	dry := env.revertDry("--revert=t1", "--conflicts=markers")
	require.Equal(t, "modify:reverted", dry.classes()["x.log"])
	env.revert("--revert=t1", "--conflicts=markers")
	want := gitMergeFile(t, env, []string{"--union"}, ours, revLines(10, map[int]string{3: "t1 wrote line 3"}),
		revLines(10, nil))
	require.Equal(t, 0, want.Code, want.Stderr)
	require.Equal(t, want.Stdout, env.Read("x.log"))
	require.Equal(t, ours, env.Read("a.dat"))
}

// TestRevert_IgnoredEdits: the ignored files the reverted turn's edit
// calls changed are named (no capture holds them, so they cannot be
// taken back), a later turn's are not, and none is touched.
func TestRevert_IgnoredEdits(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{".gitignore": "*.log\n"})
	env.Turn("a1", func() {
		env.Write("a.txt", "t1\n")
		env.Write("x.log", "t1\n")
		env.AppendLog("edit.recorded", map[string]any{"agent": "a1", "turn": "t1", "paths": []string{"a.txt"},
			"ignored": []string{"x.log"}})
	})
	env.Turn("a1", func() {
		env.Write("y.log", "t2\n")
		env.AppendLog("edit.recorded", map[string]any{"agent": "a1", "turn": "t2", "paths": []string{},
			"ignored": []string{"y.log"}})
	})
	dry := env.revertDry("--revert=t1")
	require.Equal(t, []string{"x.log"}, dry.Repos[0].IgnoredEdits)
	require.Contains(t, env.Venom("rollback", "--revert=t1", "--dry-run").OK(t).Stdout,
		"x.log (ignored, edited by the turn: cannot be reverted)")
	env.revert("--revert=t1")
	require.NoFileExists(t, env.Path("a.txt"))
	require.Equal(t, "t1\n", env.Read("x.log"))
	require.Equal(t, "t2\n", env.Read("y.log"))
}

// TestRevert_NoteAndConversation: a Claude Code agent's revert leaves the
// conversation where it is (no rewind, no new session) and its next
// prompt hook tells it which turn's changes were taken back, once.
func TestRevert_NoteAndConversation(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() { env.Write("a.txt", "1\n") })
	claudeTurn(t, env, "p2", t2End, func() { env.Write("b.txt", "2\n") })
	screen := env.Venom("rollback", "--agent=claude", "--revert=t1", "--dry-run").OK(t).Stdout
	assert.Contains(t, screen, "Files only: HEAD, the branch, the index and the conversation stay as they are.")
	assert.Contains(t, screen, "Conversation: stays as it is; the agent's note says what was reverted.")
	res := env.revert("--agent=claude", "--revert=t1")
	require.False(t, res.Conversation.Rewinds)
	require.Empty(t, res.Conversation.Drops)
	require.NoFileExists(t, env.Path("a.txt"))
	require.Equal(t, "2\n", env.Read("b.txt"))
	require.Empty(t, env.Records("agent.binding")[1:], "no new session")

	r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p3"}))
	var out hookNote
	r.JSON(t, &out)
	assert.Contains(t, out.HookSpecificOutput.AdditionalContext,
		"the changes your turn t1 made to the files were reverted")
	r = env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p4"}))
	assert.Empty(t, r.Stdout, "delivered once")
}

// TestRevert_TurnThatChangedNothing: a turn whose end reused its start's
// checkpoint has nothing to take back: an empty plan, not a refusal.
func TestRevert_TurnThatChangedNothing(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	env.Turn("a1", func() {})
	dry := env.revertDry("--revert=t4")
	require.Equal(t, dry.Revert.From, dry.Revert.To)
	require.Empty(t, dry.Repos[0].Files)
	require.Contains(t, env.Venom("rollback", "--revert=t4", "--dry-run").OK(t).Stdout, "No file changes.")
}

// TestRevert_SkippedFile: a file the turn's captures skipped (past
// venom.maxFileBytes) is in neither tree, so what the turn did to it is
// unknown: it is left and named, never silently kept.
func TestRevert_SkippedFile(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "100")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
	env.Turn("a1", func() {
		env.Write("big.bin", strings.Repeat("x", 500))
		env.Write("small.txt", "small\n")
	})
	dry := env.revertDry("--revert=t1")
	require.Equal(t, map[string]string{"big.bin": "left:too_big", "small.txt": "delete:reverted"}, dry.classes())
	env.revert("--revert=t1")
	require.Equal(t, strings.Repeat("x", 500), env.Read("big.bin"))
	require.NoFileExists(t, env.Path("small.txt"))
}

// TestRevert_FailureIsUndone: a revert that fails while writing its
// merged files is undone to the tree it found, logged with its revert,
// and a second try with a fresh plan succeeds.
func TestRevert_FailureIsUndone(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	env.Write("g.txt", "a person's file\n")
	tree := env.RecipeTree()
	plan := env.revertDry("--revert=t2").Plan
	r := env.VenomIn(env.Dir, []string{"VENOM_TEST_FAIL_AT=rollback-apply-write"}, "rollback", "--revert=t2",
		"--plan="+plan, "--json")
	r.Fails(t, 1, "failed.rollback_undone")
	require.Equal(t, tree, env.RecipeTree(), "the tree is not S again")
	ended := env.Records("rollback.ended")
	require.Equal(t, false, ended[len(ended)-1]["ok"])
	require.Equal(t, "t2", ended[len(ended)-1]["revert"])
	env.revert("--revert=t2")
	require.Equal(t, revLines(30, map[int]string{3: "t1 wrote line 3", 27: "t3 wrote line 27"}), env.Read("f.txt"))
	require.Equal(t, "a person's file\n", env.Read("g.txt"))
}

// TestRevert_BlockedByAConflict: the turn made folder p a file, and a
// later turn changed that file: p is a whole-file conflict, left under
// markers, and the folder's file p/q.txt, which only the turn deleted,
// cannot come back beneath the file that stays. It is left, naming p,
// as a rollback leaves a write a kept path blocks.
func TestRevert_BlockedByAConflict(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{"p/q.txt": "q\n"})
	env.Turn("a1", func() {
		env.Remove("p")
		env.Write("p", "p is a file now\n")
	})
	env.Turn("a1", func() { env.Write("p", "p is a file, changed by t2\n") })
	dry := env.revertDry("--revert=t1", "--conflicts=markers")
	require.Equal(t, map[string]string{"p": "left:conflict", "p/q.txt": "left:conflict"}, dry.classes())
	require.Equal(t, "p", *dry.Repos[0].Left[1].Detail)
	screen := env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--dry-run").OK(t).Stdout
	require.Contains(t, screen, "p/q.txt (conflict: p stays)")
	plan := env.revertDry("--revert=t1", "--conflicts=markers").Plan
	// Nothing can be written: the conflict stays one (exit 5), as at a
	// terminal, naming p and why.
	done := env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--plan="+plan).
		Fails(t, 5, "conflict.revert_conflicts").Stderr
	done = strings.Join(strings.Fields(done), " ") // as read, whatever the wrapping
	require.Contains(t, done, "hint: p: hint: the turn created it, and it changed since; changed by turn t2")
	require.Equal(t, "p is a file, changed by t2\n", env.Read("p"))
}

// TestRevert_NothingWrittenIsSaidSo: the real call of a revert plan that
// writes no file, quoted as a script quotes it, says what is true: at
// most nothing to revert (exit 0), or the conflicts that stay (exit 5),
// never "Reverted · 0 files"; it makes no checkpoint and records no
// rollback, and --json says the same. Plain git sees nothing changed.
func TestRevert_NothingWrittenIsSaidSo(t *testing.T) {
	t.Parallel()
	refs := func(env *Env) string {
		return env.Git("for-each-ref", "--format=%(refname) %(objectname)", "refs/venom")
	}

	t.Run("already reverted", func(t *testing.T) {
		t.Parallel()
		env := revertRepo(t)
		env.revert("--revert=t2")
		before, hash, status := refs(env), env.Git("hash-object", "f.txt"), env.Git("status", "--porcelain")
		rollbacks := len(env.Records("rollback.ended"))
		plan := env.revertDry("--revert=t2").Plan
		out := env.Venom("rollback", "--revert=t2", "--plan="+plan).OK(t).Stdout
		require.Contains(t, out, "Nothing to revert: every change it made is taken back already.")
		require.NotContains(t, out, "Reverted")
		require.NotContains(t, out, "undo:")
		r := env.Venom("rollback", "--revert=t2", "--plan="+plan, "--json").OK(t)
		var res map[string]any
		r.JSON(t, &res)
		require.Equal(t, false, res["dry_run"])
		require.NotContains(t, res, "safety", "no safety checkpoint for nothing")
		require.NotContains(t, res, "after")
		repo := res["repos"].([]any)[0].(map[string]any)
		require.Empty(t, repo["files"])
		require.Equal(t, "already_reverted", repo["left"].([]any)[0].(map[string]any)["reason"])
		require.Equal(t, before, refs(env), "a checkpoint was made")
		require.Len(t, env.Records("rollback.ended"), rollbacks)
		require.Equal(t, hash, env.Git("hash-object", "f.txt"))
		require.Equal(t, status, env.Git("status", "--porcelain"))
	})

	t.Run("whole-file conflict", func(t *testing.T) {
		t.Parallel()
		env := revertBase(t, map[string]string{"a.txt": "a\n"})
		env.Turn("a1", func() { env.Write("c.txt", "made by t1\n") })
		env.Turn("a1", func() { env.Write("c.txt", "made by t1\nchanged by t2\n") })
		before, hash, status := refs(env), env.Git("hash-object", "c.txt"), env.Git("status", "--porcelain")
		plan := env.revertDry("--revert=t1", "--conflicts=markers").Plan
		r := env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--plan="+plan)
		r.Fails(t, 5, "conflict.revert_conflicts")
		require.NotContains(t, r.Stdout+r.Stderr, "Reverted")
		require.NotContains(t, r.Stdout+r.Stderr, "Nothing to revert")
		flat := strings.Join(strings.Fields(r.Stderr), " ")
		require.Contains(t, flat, "hint: c.txt: hint: the turn created it, and it changed since; changed by turn t2")
		fitsEighty(t, "refusal", r.Stderr)
		r = env.Venom("rollback", "--revert=t1", "--conflicts=markers", "--plan="+plan, "--json")
		r.Fails(t, 5, "conflict.revert_conflicts")
		c := refusedConflicts(t, r)
		require.Len(t, c, 1)
		require.Equal(t, "c.txt", c[0]["path"])
		require.Equal(t, "later_turn", c[0]["by"])
		require.Equal(t, before, refs(env), "a checkpoint was made")
		require.Empty(t, env.Records("rollback.ended"))
		require.Equal(t, hash, env.Git("hash-object", "c.txt"))
		require.Equal(t, status, env.Git("status", "--porcelain"))
	})
}

// TestRevert_NamesTheTurnThatWroteTheLines: of two later turns that
// changed the file, the conflict names the one that wrote the lines the
// revert meets, as blame by turn finds it, and a person's line among
// them makes it a person's too.
func TestRevert_NamesTheTurnThatWroteTheLines(t *testing.T) {
	t.Parallel()
	env, edits := rewrittenRepo(t)
	edits[16] = "a person wrote line 16"
	env.Write("f.txt", revLines(30, edits))
	r := env.Venom("rollback", "--revert=t2", "--dry-run", "--json").Fails(t, 5, "conflict.revert_conflicts")
	c := refusedConflicts(t, r)[0]
	require.Equal(t, []any{"t4"}, c["turns"], "t3 changed the file, not these lines")
	require.Equal(t, "person", c["by"])
	require.Equal(t, []any{map[string]any{"start": 15.0, "end": 16.0}}, c["lines"])
	require.Contains(t, env.Venom("rollback", "--revert=t2", "--dry-run").Stderr,
		"lines 15-16 changed by turn t4 and an edit outside the agent's turns")
}

// TestRevert_FitsEightyColumns: a revert's refusal and its hints, its
// plan, and its transcript fit 80 columns with a harness session's agent
// id, nested paths, and line and whole-file conflicts, as a rollback's do.
func TestRevert_FitsEightyColumns(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	const id = "claude-5f2a9c1e"
	env.Write("src/components/widget/render.txt", revLines(10, nil))
	env.Write("src/components/widget/icon.bin", "\x00before")
	env.Commit("base")
	env.Venom("checkpoint", "--agent="+id, "--isolation=worktree", "--json").OK(t)
	env.Turn(id, func() {
		env.Write("src/components/widget/render.txt", revLines(10, map[int]string{5: "t1"}))
		env.Write("src/components/widget/icon.bin", "\x00t1")
		env.Write("src/components/widget/made-by-the-turn.txt", "t1\n")
	})
	env.Turn(id, func() {
		env.Write("src/components/widget/render.txt", revLines(10, map[int]string{5: "t2", 6: "t2"}))
		env.Write("src/components/widget/icon.bin", "\x00t2")
		env.Write("src/components/widget/made-by-the-turn.txt", "t2\n")
	})
	env.Write("src/components/widget/render.txt", revLines(10, map[int]string{5: "t2", 6: "t2", 4: "a person"}))
	refused := env.Venom("rollback", "--agent="+id, "--revert=t1", "--dry-run")
	refused.Fails(t, 5, "conflict.revert_conflicts")
	fitsEighty(t, "refusal", refused.Stderr)
	dry := env.Venom("rollback", "--agent="+id, "--revert=t1", "--conflicts=markers", "--dry-run").OK(t).Stdout
	fitsEighty(t, "plan", dry)
	plan := env.revertDry("--agent="+id, "--revert=t1", "--conflicts=markers").Plan
	done := env.Venom("rollback", "--agent="+id, "--revert=t1", "--conflicts=markers", "--plan="+plan).OK(t).Stdout
	fitsEighty(t, "transcript", done)
	require.Contains(t, done, "src/components/widget/render.txt")
}

// TestRevert_CrashIsSettled: a revert killed after its safety checkpoint
// is settled by the next command that takes the lock as any rollback is
// (failed.rollback_interrupted, nothing written to the tree), and the
// record still says it was a revert.
func TestRevert_CrashIsSettled(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	plan := env.revertDry("--revert=t2").Plan
	c := env.StartPaused("rollback-after-safety", nil, "rollback", "--revert=t2", "--plan="+plan, "--json")
	Kill9(t, c)
	crashed := env.Snapshot()
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	require.Equal(t, crashed.Files, env.Snapshot().Files, "settling wrote to the tree")
	ended := env.Records("rollback.ended")
	require.Len(t, ended, 1)
	require.Equal(t, "failed.rollback_interrupted", ended[0]["code"])
	require.Equal(t, "t2", ended[0]["revert"])
}

// TestRevert_TurnNamesInAPair: --revert=t1..t3 takes back what changed
// from t1's end to t3's, turns t2 and t3 together, and keeps t1's.
func TestRevert_TurnNamesInAPair(t *testing.T) {
	t.Parallel()
	env := revertRepo(t)
	res := env.revert("--revert=t1..t3")
	require.Nil(t, res.Revert.Turn)
	require.Equal(t, revLines(30, map[int]string{3: "t1 wrote line 3"}), env.Read("f.txt"))
	ended := env.Records("rollback.ended")
	require.Equal(t, res.Revert.From+".."+res.Revert.To, ended[len(ended)-1]["revert"])
}

// TestRevert_AlreadyReverted: a turn reverted once, reverted again,
// merges to the file as it is: its change taken back already, left, not
// a write, and at a terminal nothing to revert, as git revert says. The
// file keeps t3's later line, so no report may call it as the turn found
// it. Plain git sees the file byte for byte as before and no other
// change.
func TestRevert_AlreadyReverted(t *testing.T) {
	t.Parallel()
	env := revertRepo(t) // t3 changed f.txt after t2: the second revert merges
	env.revert("--revert=t2")
	hash := env.Git("hash-object", "f.txt")
	status := env.Git("status", "--porcelain")

	dry := env.revertDry("--revert=t2")
	require.Equal(t, map[string]string{"f.txt": "left:already_reverted"}, dry.classes())
	start := env.Git("rev-parse", env.CheckpointTreeOf("a1", dry.Revert.From)+":f.txt")
	require.NotEqual(t, start, hash, "f.txt is not as t2 found it: t3's line 27 stays")
	out := env.Venom("rollback", "--revert=t2", "--dry-run").OK(t).Stdout
	require.Contains(t, out, "f.txt (taken back already)")
	require.NotContains(t, out, "as the turn found it")
	require.NotContains(t, out, "Taken back:")
	require.NotContains(t, out, "writes")

	screen, code := env.ptyRun(t, nil, "rollback", "--revert=t2")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Nothing to revert: every change it made is taken back already.")
	require.NotContains(t, screen, "as the turn found it")
	require.NotContains(t, screen, "Revert?")
	out = env.Venom("rollback", "--revert=t2", "--plan="+dry.Plan).OK(t).Stdout
	require.Contains(t, out, "Nothing to revert: every change it made is taken back already.")
	require.NotContains(t, out, "as the turn found it")

	res := env.revert("--revert=t2")
	require.Empty(t, res.Repos[0].Files)
	require.Equal(t, hash, env.Git("hash-object", "f.txt"))
	require.Equal(t, status, env.Git("status", "--porcelain"))
}

// TestRevert_WholeConflictIsNotNothing: t1 created c.txt and t2 changed
// it. Under --conflicts=markers the file is a conflict no marker can
// show, left; at a terminal that is said, with the path and why, and the
// exit status is a conflict's, as git revert's modify/delete: never
// "nothing to revert". The answer m to the conflict question ends alike.
func TestRevert_WholeConflictIsNotNothing(t *testing.T) {
	t.Parallel()
	env := revertBase(t, map[string]string{"a.txt": "a\n"})
	env.Turn("a1", func() { env.Write("c.txt", "made by t1\n") })
	env.Turn("a1", func() { env.Write("c.txt", "made by t1\nchanged by t2\n") })
	hash := env.Git("hash-object", "c.txt")
	status := env.Git("status", "--porcelain")

	dry := env.revertDry("--revert=t1", "--conflicts=markers")
	require.Equal(t, map[string]string{"c.txt": "left:conflict"}, dry.classes())

	for _, run := range []struct {
		answers []string
		args    []string
	}{
		{nil, []string{"--revert=t1", "--conflicts=markers"}},
		{[]string{"m"}, []string{"--revert=t1"}},
	} {
		screen, code := env.ptyRun(t, run.answers, "rollback", run.args...)
		require.Equal(t, 5, code, screen)
		// As read: without the terminal's escapes, whatever the wrapping.
		flat := regexp.MustCompile("\x1b(\\[[0-9;?]*[A-Za-z]|[=>])").ReplaceAllString(screen, "")
		flat = strings.Join(strings.Fields(flat), " ")
		require.NotContains(t, flat, "Nothing to revert", screen)
		require.Contains(t, flat, "c.txt the turn created it, and it changed since; changed by turn t2: left as it is.", screen)
		require.Contains(t, flat, "Not reverted: 1 file meets later changes that conflict markers cannot show", screen)
		require.NotContains(t, screen, "Revert?")
		require.Equal(t, hash, env.Git("hash-object", "c.txt"))
		require.Equal(t, status, env.Git("status", "--porcelain"))
	}
}

// gitRevertWrites is what git revert --no-commit of the middle one of
// three commits of f.txt writes (it must conflict), in a repository of
// its own with merge.conflictStyle style and .gitattributes attrs.
func gitRevertWrites(t *testing.T, env *Env, style, attrs string, contents ...string) string {
	dir := t.TempDir()
	git := func(args ...string) Result {
		return env.GitRaw(append([]string{"-C", dir, "-c", "merge.conflictStyle=" + style}, args...)...)
	}
	require.Equal(t, 0, git("init", "-q").Code)
	if attrs != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte(attrs), 0o644))
	}
	for i, content := range contents {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644))
		require.Equal(t, 0, git("add", ".").Code)
		r := git("commit", "-qm", fmt.Sprint("c", i))
		require.Equal(t, 0, r.Code, r.Stderr)
	}
	r := git("revert", "--no-commit", "HEAD~1")
	require.Equal(t, 1, r.Code, r.Stderr)
	b, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	require.NoError(t, err)
	return string(b)
}
