package tests

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rollback of some paths (docs/rollback.md#some-paths), checked with
// plain git.

// scopedEnv: agent a1 in its own worktree (unguarded, so a whole rollback
// would move HEAD) takes k1, then a turn changes files in src/, docs/ and
// at the top, and commits; k2 ends the turn.
func scopedEnv(t *testing.T) *Env {
	env := NewEnv(t)
	env.Write("src/a.go", "package a // k1\n")
	env.Write("src/b.go", "package b // k1\n")
	env.Write("docs/x.md", "x k1\n")
	env.Write("docs/y/z.md", "z k1\n")
	env.Write("top.txt", "top k1\n")
	env.Commit("base")
	env.Turn("a1", func() {
		env.Write("src/a.go", "package a // k2\n")
		env.Write("src/b.go", "package b // k2\n")
		env.Write("docs/x.md", "x k2\n")
		env.Write("docs/new.md", "new in k2\n")
		env.Remove("docs/y/z.md")
		env.Write("top.txt", "top k2\n")
		env.Commit("the agent's commit")
	}, "--isolation=worktree")
	return env
}

// pathsOfPlan lists a plan's files as path → change.
func pathsOfPlan(r RollbackResult) map[string]string {
	m := map[string]string{}
	for _, f := range r.Repos[0].Files {
		m[f.Path] = f.Change
	}
	return m
}

type scopedResult struct {
	RollbackResult
	Paths []string `json:"paths"`
}

func TestRollbackPaths_OnlyTheChosenPathsGoBackAndHeadStays(t *testing.T) {
	t.Parallel()
	env := scopedEnv(t)
	k1 := "refs/venom/checkpoints/a1/1"
	k2 := "refs/venom/checkpoints/a1/2"
	head, index := env.Git("rev-parse", "HEAD"), env.IndexHash()

	var dry scopedResult
	env.Venom("rollback", "--checkpoint=k1", "--path=src/a.go", "--path=docs/", "--dry-run", "--json").OK(t).JSON(t, &dry)
	assert.Equal(t, map[string]string{"src/a.go": "modify", "docs/x.md": "modify", "docs/new.md": "delete",
		"docs/y/z.md": "create"}, pathsOfPlan(dry.RollbackResult))
	assert.Equal(t, []string{"src/a.go", "docs/"}, dry.Paths)
	assert.Equal(t, "files", dry.Restore, "a path-scoped rollback restores files only")
	assert.False(t, dry.Repos[0].Head.Moves, "HEAD never moves for some paths")
	assert.False(t, dry.Conversation.Rewinds)

	// The plan binds its paths: quoted for other paths, or none, it is stale.
	env.Venom("rollback", "k1", "--plan="+dry.Plan, "--json", "--", "src/a.go").Fails(t, 5, "conflict.rollback_stale")
	env.Venom("rollback", "k1", "--plan="+dry.Plan, "--json").Fails(t, 5, "conflict.rollback_stale")

	// The git form, the same paths in another order and spelling.
	var res scopedResult
	env.Venom("rollback", "k1", "--plan="+dry.Plan, "--json", "--", "docs/", "./src/a.go").OK(t).JSON(t, &res)
	require.NotNil(t, res.Exact)
	assert.True(t, *res.Exact)
	assert.Equal(t, pathsOfPlan(dry.RollbackResult), pathsOfPlan(res.RollbackResult))

	// Plain git: the chosen paths are k1's, everything else is k2's, and
	// HEAD, the branch and the index did not move.
	// (git's tree of the working files, untracked ones included, against
	// the checkpoints: git diff alone would skip the untracked docs/y/z.md)
	now := env.RecipeTree()
	assert.Empty(t, env.Git("diff-tree", "-r", "--name-only", k1, now, "--", "src/a.go", "docs"))
	assert.Equal(t, "z k1\n", env.Read("docs/y/z.md"))
	assert.NoFileExists(t, env.Path("docs/new.md"))
	assert.Equal(t, "src/b.go\ntop.txt", env.Git("diff-tree", "-r", "--name-only", k1, now, "--", ":!src/a.go", ":!docs"))
	assert.Empty(t, env.Git("diff-tree", "-r", "--name-only", k2, now, "--", "src/b.go", "top.txt"))
	assert.Equal(t, "package b // k2\n", env.Read("src/b.go"))
	assert.Equal(t, head, env.Git("rev-parse", "HEAD"))
	assert.Equal(t, index, env.IndexHash())

	// The log and the events say which paths went back.
	started, ended := env.Records("rollback.started"), env.Records("rollback.ended")
	require.Len(t, ended, 1)
	assert.Equal(t, []any{":(top)docs/", ":(top)src/a.go"}, ended[0]["paths"])
	assert.Equal(t, ended[0]["paths"], started[0]["paths"])
	ev := env.Venom("checkpoint", "events", "--types=agent.rollback_ended", "--json").OK(t).Stdout
	assert.Contains(t, ev, `"paths":[":(top)docs/",":(top)src/a.go"]`)

	// The human line names them.
	env.Write("src/a.go", "package a // again\n")
	r := env.Venom("rollback", "k1", "--dry-run", "--", "src/a.go").OK(t)
	assert.Contains(t, r.Stdout, "Only src/a.go: every other file, HEAD and the index stay as they are.")
	assert.Contains(t, r.Stdout, " -- :/src/a.go\n", "the command to run names the paths")
	plan := strings.TrimSpace(r.Stdout[strings.LastIndex(r.Stdout, "--plan=")+len("--plan="):])
	plan = strings.Fields(plan)[0]
	r = env.Venom("rollback", "k1", "--plan="+plan, "--", ":/src/a.go").OK(t)
	assert.Contains(t, r.Stdout, "↺ Rolled back src/a.go to k1")
	assert.Equal(t, "package a // k1\n", env.Read("src/a.go"))
}

func TestRollbackPaths_RelativeToTheCurrentFolder(t *testing.T) {
	t.Parallel()
	env := scopedEnv(t)
	var dry scopedResult
	env.VenomIn(env.Path("src"), nil, "rollback", "k1", "--dry-run", "--json", "--", "a.go", "../docs/x.md").OK(t).JSON(t, &dry)
	assert.Equal(t, map[string]string{"src/a.go": "modify", "docs/x.md": "modify"}, pathsOfPlan(dry.RollbackResult))
	// git's own answer for the same pathspecs from there.
	names := env.run(env.Path("src"), nil, "git", "diff", "--name-only", "refs/venom/checkpoints/a1/1",
		"refs/venom/checkpoints/a1/2", "--", "a.go", "../docs/x.md")
	assert.Equal(t, "docs/x.md\nsrc/a.go\n", names.Stdout)
	var glob scopedResult
	env.VenomIn(env.Path("src"), nil, "rollback", "k1", "--dry-run", "--json", "--path=:(glob)../**/*.md").OK(t).JSON(t, &glob)
	assert.Equal(t, map[string]string{"docs/x.md": "modify", "docs/new.md": "delete", "docs/y/z.md": "create"},
		pathsOfPlan(glob.RollbackResult))
	var excl scopedResult
	env.Venom("rollback", "k1", "--dry-run", "--json", "--path=src", "--path=:!src/b.go").OK(t).JSON(t, &excl)
	assert.Equal(t, map[string]string{"src/a.go": "modify"}, pathsOfPlan(excl.RollbackResult))
}

func TestRollbackPaths_RefusesBadPathsAndTheConversation(t *testing.T) {
	t.Parallel()
	env := scopedEnv(t)
	env.Venom("rollback", "k1", "--dry-run", "--json", "--restore=all", "--path=src").Fails(t, 2, "invalid_params.usage")
	env.VenomIn(env.Path("src"), nil, "rollback", "k1", "--dry-run", "--json", "--path=../../x").Fails(t, 2, "invalid_params.path")
	env.Venom("rollback", "k1", "--dry-run", "--json", "--", ".git/config").Fails(t, 2, "invalid_params.path")
	// A path with no change: an empty plan, nothing else.
	var dry scopedResult
	env.Venom("rollback", "k1", "--dry-run", "--json", "--path=nothing/here").OK(t).JSON(t, &dry)
	assert.Empty(t, dry.Repos[0].Files)
}

// TestRollbackPaths_OutsideEditsAmongTheChosenOnly: in a guarded tree a
// person's edit refuses a rollback only when it is among the chosen paths.
func TestRollbackPaths_OutsideEditsAmongTheChosenOnly(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("agent.txt", "agent\n") }) // in place: guarded
	env.Write("README.md", "a person's edit\n")

	var dry scopedResult
	env.Venom("rollback", "k1", "--dry-run", "--json", "--path=agent.txt").OK(t).JSON(t, &dry)
	assert.Equal(t, map[string]string{"agent.txt": "delete"}, pathsOfPlan(dry.RollbackResult))
	m := env.Venom("rollback", "k1", "--dry-run", "--json", "--path=README.md", "--path=agent.txt").
		Fails(t, 5, "conflict.outside_edits").Map(t)
	data, _ := json.Marshal(m["error"].(map[string]any)["data"])
	assert.JSONEq(t, `{"repos":[{"repo":".","paths":["README.md"]}]}`, string(data))

	res := env.Rollback("k1", "--path=agent.txt")
	assert.True(t, *res.Exact)
	assert.NoFileExists(t, env.Path("agent.txt"))
	assert.Equal(t, "a person's edit\n", env.Read("README.md"))
	// The safety checkpoint holds the whole tree as it was.
	assert.Equal(t, "agent", env.Git("show", "refs/venom/checkpoints/a1/3:agent.txt"))
	assert.Equal(t, "a person's edit", env.Git("show", "refs/venom/checkpoints/a1/3:README.md"))
}

// TestRollbackPaths_ExactOverTheChosenPaths: a write elsewhere during the
// rollback leaves it exact; one among the chosen paths does not.
func TestRollbackPaths_ExactOverTheChosenPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		write string
		exact bool
	}{{"elsewhere.txt", true}, {"docs/during.md", false}} {
		env := scopedEnv(t)
		plan := env.DryRun("k1", "--path=docs").Plan
		finish := env.startResumable("rollback-after-safety", "rollback", "k1", "--plan="+plan, "--path=docs", "--json")
		env.Write(tc.write, "written during the rollback\n")
		r := finish()
		var res RollbackResult
		r.OK(t).JSON(t, &res)
		require.NotNil(t, res.Exact)
		assert.Equal(t, tc.exact, *res.Exact, "a write to %s", tc.write)
	}
}

// TestRollbackPaths_UndoPutsBackWhatItChanged: --undo after a path-scoped
// rollback goes back to its safety checkpoint (HEAD stays, as it never
// moved); with paths, the undo is scoped too.
func TestRollbackPaths_UndoPutsBackWhatItChanged(t *testing.T) {
	t.Parallel()
	env := scopedEnv(t)
	before := env.RecipeTree()
	env.Rollback("k1", "--path=src", "--path=top.txt")
	assert.Equal(t, "top k1\n", env.Read("top.txt"))

	var scoped scopedResult
	env.Venom("rollback", "--undo", "--dry-run", "--json", "--path=top.txt").OK(t).JSON(t, &scoped)
	assert.Equal(t, map[string]string{"top.txt": "modify"}, pathsOfPlan(scoped.RollbackResult))

	undo := env.DryRun("--undo")
	assert.Equal(t, map[string]string{"src/a.go": "modify", "src/b.go": "modify", "top.txt": "modify"},
		pathsOfPlan(undo))
	assert.False(t, undo.Repos[0].Head.Moves)
	env.Rollback("--undo")
	assert.Equal(t, before, env.RecipeTree(), "the tree is as before the path-scoped rollback")
}

// TestRollbackPaths_NoteNamesThePathsAndTheConversationStays: a harness
// agent's path-scoped rollback never rewinds its conversation, and the
// note its next prompt gets says which paths went back.
func TestRollbackPaths_NoteNamesThePathsAndTheConversationStays(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Hook("claude-code", env.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, env, "p1", t1End, func() { env.Write("a.txt", "1\n"); env.Write("b.txt", "1\n") })
	claudeTurn(t, env, "p2", t2End, func() { env.Write("a.txt", "2\n"); env.Write("b.txt", "2\n") })
	bindings := len(env.Records("agent.binding"))

	// Without paths the rollback to k2 (after t1) would rewind t2.
	whole := env.DryRun("--agent=claude", "k2")
	assert.True(t, whole.Conversation.Rewinds)
	res := env.Rollback("--agent=claude", "k2", "--path=a.txt")
	assert.False(t, res.Conversation.Rewinds)
	assert.Empty(t, res.Conversation.Drops)
	assert.Equal(t, "files", res.Restore)
	assert.Len(t, env.Records("agent.binding"), bindings, "no new conversation")
	assert.Equal(t, "1\n", env.Read("a.txt"))
	assert.Equal(t, "2\n", env.Read("b.txt"))

	r := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p3"}))
	assert.Contains(t, r.Stdout, "rolled back to their state after turn t1")
	assert.Contains(t, r.Stdout, "Only these paths went back: a.txt; every other file is as it was.")
}

// TestRollbackPaths_Interactive: at a terminal the plan shows the paths,
// and the real call quotes it for them.
func TestRollbackPaths_Interactive(t *testing.T) {
	t.Parallel()
	env := scopedEnv(t)
	screen, code := env.ptyRun(t, []string{"y"}, "rollback", "k1", "--", "src/a.go")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "src/a.go\x1b[22m: every other file, HEAD and the index stay as they are.")
	assert.Contains(t, screen, "Rolled back src/a.go to k1")
	assert.Equal(t, "package a // k1\n", env.Read("src/a.go"))
	assert.Equal(t, "package b // k2\n", env.Read("src/b.go"))
	_, err := os.Stat(env.Path("docs/new.md"))
	assert.NoError(t, err, "a path not chosen stays")
}

// TestRollbackPaths_AnyBytesAsB64: a path that is not valid UTF-8 is named
// b64:<base64> from the top (docs/json.md#conventions), in git venom-diff and in a
// rollback, whose log keeps it exactly.
func TestRollbackPaths_AnyBytesAsB64(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	name := "sub/caf\xe9.txt"
	env.Write(name, "k1\n")
	env.Write("other.txt", "k1\n")
	env.Commit("latin-1 name")
	env.Turn("a1", func() { env.Write(name, "k2\n"); env.Write("other.txt", "k2\n") }, "--isolation=worktree")
	b64 := "b64:" + base64.StdEncoding.EncodeToString([]byte(name))

	var diff diffResult
	env.VenomIn(env.Path("sub"), nil, "diff", "k1", "k2", "--json", "--path="+b64).OK(t).JSON(t, &diff)
	require.Len(t, diff.Files, 1)
	assert.Equal(t, "sub/caf\ufffd.txt", diff.Files[0].Path)

	res := env.Rollback("k1", "--path="+b64)
	assert.True(t, *res.Exact)
	assert.Equal(t, "k1\n", env.Read(name))
	assert.Equal(t, "k2\n", env.Read("other.txt"))
	stored := env.Records("rollback.ended")[0]["paths"].([]any)[0].(string)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(stored, "b64:"))
	require.NoError(t, err)
	assert.Equal(t, ":(top,literal)"+name, string(raw))
}

// One set of paths is one plan id, however it was written: "-- ." in
// docs/, "-- docs" and "-- docs/" at the top, "-- ../docs" in src/ and
// ":/docs" name the same paths; the id of a plan quoted from one form is
// accepted with another. A different set ("docs/x.md", "docs" and "src")
// is a different id.
func TestRollbackPaths_OneSetOneID(t *testing.T) {
	t.Parallel()
	env := scopedEnv(t)
	dry := func(dir string, paths ...string) string {
		t.Helper()
		var r scopedResult
		args := append([]string{"rollback", "k1", "--dry-run", "--json", "--"}, paths...)
		env.VenomIn(env.Path(dir), nil, args[0], args[1:]...).OK(t).JSON(t, &r)
		return r.Plan
	}
	id := dry("docs", ".")
	assert.Equal(t, id, dry("", "docs"), "-- . in docs/ and -- docs at the top")
	assert.Equal(t, id, dry("", "docs/"))
	assert.Equal(t, id, dry("src", "../docs"))
	assert.Equal(t, id, dry("src", ":/docs"))
	assert.Equal(t, id, dry("docs", ".", "./", "../docs"), "a path named twice is named once")
	assert.NotEqual(t, id, dry("", "docs/x.md"))
	assert.NotEqual(t, id, dry("", "docs", "src"))
	assert.Equal(t, dry("", "docs", "src"), dry("", "src/", "docs/"), "order does not matter")

	// The plan of one form is the plan of the other: the real call takes it.
	env.VenomIn(env.Path("docs"), nil, "rollback", "k1", "--plan="+dry("", "docs"), "--json", "--", ".").OK(t)
	assert.Equal(t, "x k1\n", env.Read("docs/x.md"))
	assert.Equal(t, "package a // k2\n", env.Read("src/a.go"), "outside the set, nothing moved")
}

// Where the checkpoint holds a file at d and the tree a folder, "d/"
// (what "-- ." in d/ names) and "d" choose different paths, and so are
// different plans: only "d" brings the file back.
func TestRollbackPaths_FolderOnlyWhenAFileIsThere(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("d", "a file in k1\n")
	env.Commit("base")
	env.Turn("a1", func() {
		env.Remove("d")
		env.Write("d/inner.txt", "a folder in k2\n")
	}, "--isolation=worktree")
	var inside, top scopedResult
	env.VenomIn(env.Path("d"), nil, "rollback", "k1", "--dry-run", "--json", "--", ".").OK(t).JSON(t, &inside)
	env.Venom("rollback", "k1", "--dry-run", "--json", "--", "d").OK(t).JSON(t, &top)
	assert.NotEqual(t, inside.Plan, top.Plan)
	assert.Equal(t, map[string]string{"d/inner.txt": "delete"}, pathsOfPlan(inside.RollbackResult))
	assert.Equal(t, map[string]string{"d": "create", "d/inner.txt": "delete"}, pathsOfPlan(top.RollbackResult))
}
