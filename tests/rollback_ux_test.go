package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RegisterAs registers agent with a harness before its first capture, as a
// hook's registration would: the conversation rules differ by harness, and
// these tests need a harness's rules without driving one.
func (e *Env) RegisterAs(agent, harness, isolation string) {
	e.t.Helper()
	common := e.CommonDir()
	require.NoError(e.t, os.MkdirAll(filepath.Join(common, "venom"), 0o755))
	f, err := os.OpenFile(filepath.Join(common, "venom", "log.jsonl"), os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(e.t, err)
	require.NoError(e.t, f.Close())
	top, err := filepath.EvalSymlinks(e.Git("rev-parse", "--show-toplevel"))
	require.NoError(e.t, err)
	e.AppendLog("agent.registered", map[string]any{"agent": agent, "tree": top, "isolation": isolation,
		"harness": harness, "parent": nil})
}

// twoTurnsNone is an agent of no harness, in place, after two turns:
// k1 turn_start t1, k2 turn_end t1 (a.txt), k3 turn_end t2 (b.txt; t2's
// turn_start reused k2).
func twoTurnsNone(t *testing.T) *Env {
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("a.txt", "a\n") })
	env.Turn("a1", func() { env.Write("b.txt", "b\n") })
	require.Equal(t, []string{"k3", "k2", "k1"}, listIDs(env.List(t)))
	return env
}

// An agent with no harness has no conversation, so a
// rollback to a checkpoint before its last turn is a plain files rollback
// (it was unsupported.harness_capability), and nothing is said about a
// conversation, to k1 included (it said "conversation too").
func TestRollback_NoHarnessRollsBackFiles(t *testing.T) {
	t.Parallel()
	env := twoTurnsNone(t)
	res := env.DryRun("--checkpoint=k2")
	require.Equal(t, "all", res.Restore)
	require.False(t, res.Conversation.Rewinds)
	require.Equal(t, []string{}, res.Conversation.Drops)
	require.Equal(t, "t1", *res.Conversation.ThroughTurn)
	human := env.Venom("rollback", "--checkpoint=k2", "--dry-run").OK(t).Stdout
	require.Contains(t, human, "delete b.txt")
	require.NotContains(t, strings.ToLower(human), "conversation")

	res = env.Rollback("--checkpoint=k2")
	require.Equal(t, "k2", res.Checkpoint)
	require.NoFileExists(t, env.Path("b.txt"))
	require.Equal(t, "a\n", env.Read("a.txt"))
	require.Empty(t, env.Records("agent.binding"), "no conversation, no binding")
	require.Nil(t, env.Records("rollback.ended")[0]["drops"], "no conversation, no turn dropped")

	// Back to before the first turn, by hand, as the README shows.
	plan := env.DryRun("--checkpoint=k1").Plan
	out := env.Venom("rollback", "--checkpoint=k1", "--plan="+plan).OK(t).Stdout
	require.NotContains(t, strings.ToLower(out), "conversation")
	require.Contains(t, out, "↺ Rolled back to k1 (before the first turn) · 1 file · safety k6\n  undo: git venom-rollback --undo\n")
	require.NoFileExists(t, env.Path("a.txt"))
	require.Empty(t, env.Records("agent.binding"))

	// The undo the line gives, and the README's: back to the safety checkpoint.
	undo := env.Venom("rollback", "--undo", "--dry-run").OK(t).Stdout
	require.Contains(t, undo, "Undo the rollback of a1 to k1: back to its safety checkpoint.")
	require.Contains(t, undo, "To run it:\n  git venom-rollback --undo --plan=p1-")
	require.NotContains(t, strings.ToLower(undo), "conversation")
	res = env.Rollback("--undo")
	require.Equal(t, "k6", res.Checkpoint)
	require.Equal(t, "a\n", env.Read("a.txt"))
	require.NoFileExists(t, env.Path("b.txt"))
}

func listIDs(l ListResult) []string {
	out := []string{}
	for _, it := range l.Checkpoints {
		out = append(out, it.Checkpoint)
	}
	return out
}

// docs/checkpoints.md#names: every command that names a checkpoint
// takes k<n>, last, ~<n> and t<n>, through one resolver; the rollback
// takes it as its argument too, and --checkpoint still.
func TestShorthands_EveryCommand(t *testing.T) {
	t.Parallel()
	env := twoTurnsNone(t)
	env.Turn("a1", func() { env.Write("c.txt", "c\n") }) // k4
	names := map[string]string{"k2": "k2", "last": "k4", "~0": "k4", "~1": "k3", "~3": "k1", "t1": "k2", "t2": "k3",
		"t3": "k4",
		// git's steps after last: the form a shell leaves alone.
		"last~1": "k3", "last^": "k3", "last~": "k3", "last^^^": "k1", "last~2^": "k1", "last~0": "k4"}
	for name, want := range names {
		require.Equal(t, want, env.DryRun(name).Checkpoint, "rollback %s", name)
		require.Equal(t, want, env.DryRun("--checkpoint="+name).Checkpoint, "rollback --checkpoint=%s", name)
		// diff: positional and --from/--to; the stat names the files of that checkpoint.
		var d struct {
			Files []struct{ Path string } `json:"files"`
		}
		env.Venom("diff", name, "k2", "--json").OK(t).JSON(t, &d)
		env.Venom("diff", "--from="+name, "--to=k2", "--json").OK(t)
		var want2 struct {
			Files []struct{ Path string } `json:"files"`
		}
		env.Venom("diff", want, "k2", "--json").OK(t).JSON(t, &want2)
		require.Equal(t, want2, d, "diff %s", name)
	}
	require.Equal(t, []string{"k3", "k2", "k1"}, listIDs(env.List(t, "--before=last")))
	require.Equal(t, []string{"k1"}, listIDs(env.List(t, "--before=t1")))
	require.Equal(t, []string{"k2", "k1"}, listIDs(env.List(t, "--before=~1")))
	// The human diff names the resolved checkpoint.
	require.Contains(t, env.Venom("diff", "last").OK(t).Stdout, "No changes between k4 and the current files.")

	// The plan quotes the resolved checkpoint; a shorthand whose meaning
	// moved on makes the plan stale.
	dry := env.Venom("rollback", "last", "--dry-run").OK(t).Stdout
	require.Contains(t, dry, "To run it:\n  git venom-rollback k4 --plan=p1-")
	plan := env.DryRun("~1").Plan
	env.Venom("rollback", "~1", "--plan="+plan, "--json").OK(t)
	require.Equal(t, "k3", env.Records("rollback.started")[0]["checkpoint"])
	plan = env.DryRun("last").Plan
	env.Turn("a1", func() { env.Write("d.txt", "d\n") })
	env.Venom("rollback", "last", "--plan="+plan, "--json").Fails(t, 5, "conflict.rollback_stale")
}

// Names that name nothing, or are no names, fail clearly and change nothing.
func TestShorthands_Errors(t *testing.T) {
	t.Parallel()
	env := twoTurnsNone(t)
	snap := env.Snapshot()
	logLen := len(env.LogRecords())
	for _, c := range []struct {
		args       []string
		exit       int
		code, text string
	}{
		{[]string{"rollback", "~3", "--dry-run"}, 3, "not_found.checkpoint", "2 checkpoint(s) before its last"},
		{[]string{"rollback", "t9", "--dry-run"}, 3, "not_found.checkpoint", "no turn t9"},
		{[]string{"rollback", "k9", "--dry-run"}, 3, "not_found.checkpoint", "never existed"},
		{[]string{"rollback", "HEAD", "--dry-run"}, 2, "invalid_params.checkpoint", "k<n>, last, last~<n>"},
		// What a git user types first, and what bash makes of an unquoted
		// ~1 after pushd, get a hint that names the way.
		{[]string{"rollback", "HEAD~1", "--dry-run"}, 2, "invalid_params.checkpoint", "hint: did you mean last~1?"},
		{[]string{"rollback", "--checkpoint=@^", "--dry-run"}, 2, "invalid_params.checkpoint", "hint: did you mean last^?"},
		{[]string{"rollback", "/tmp", "--dry-run"}, 2, "invalid_params.checkpoint", "write last~<n>, or quote it"},
		{[]string{"diff", "2"}, 2, "invalid_params.checkpoint", "hint: did you mean k2?"},
		{[]string{"checkpoint", "list", "--before=T1"}, 2, "invalid_params.checkpoint", "hint: did you mean t1?"},
		{[]string{"rollback", "--dry-run"}, 2, "invalid_params.checkpoint", "which checkpoint?"},
		// The same mistake, bare, is the same error in both commands, at
		// a terminal or not.
		{[]string{"rollback"}, 2, "invalid_params.checkpoint", "which checkpoint?"},
		{[]string{"diff"}, 2, "invalid_params.checkpoint", "which checkpoint?"},
		// A bad plan id's hint is the dry run of what was asked for.
		{[]string{"rollback", "--undo", "--plan=x"}, 2, "invalid_params.plan", "hint: the dry run prints it: git venom-rollback --undo --dry-run"},
		{[]string{"rollback", "--revert=t1", "--plan=x"}, 2, "invalid_params.plan", "prints it: git venom-rollback --revert=t1 --dry-run"},
		{[]string{"rollback", "k1", "--plan=x"}, 2, "invalid_params.plan", "prints it: git venom-rollback k1 --dry-run"},
		{[]string{"checkpoint", "hook", "install", "claude"}, 2, "invalid_params.harness", "hint: did you mean claude-code?"},
		{[]string{"checkpoint", "hook", "uninstall", "qwen"}, 2, "invalid_params.harness", "hint: did you mean qwen-code?"},
		{[]string{"rollback", "k1", "k2", "--dry-run"}, 2, "invalid_params.usage", "unexpected argument k2"},
		{[]string{"rollback", "k1", "--checkpoint=k2", "--dry-run"}, 2, "invalid_params.usage", "given twice"},
		{[]string{"rollback", "--undo", "k1", "--dry-run"}, 2, "invalid_params.usage", "name no checkpoint"},
		{[]string{"rollback", "--undo", "--dry-run"}, 3, "not_found.checkpoint", "no rollback to undo"},
		{[]string{"diff", "~5"}, 3, "not_found.checkpoint", "goes back 5"},
		{[]string{"diff", "k1", "t7"}, 3, "not_found.checkpoint", "no turn t7"},
		{[]string{"diff", "lastt"}, 2, "invalid_params.checkpoint", "names no checkpoint"},
		{[]string{"checkpoint", "list", "--before=~9"}, 3, "not_found.checkpoint", "goes back 9"},
		// A plan id that cannot be one is a usage error, not a stale plan.
		{[]string{"rollback", "k1", "--plan=xyz"}, 2, "invalid_params.plan", "a plan id is p1- and 16 hex digits"},
		{[]string{"rollback", "k1", "--plan=p1-5DEB50DB6E89A1F9"}, 2, "invalid_params.plan", "p1- and 16 hex"},
		{[]string{"rollback", "k1", "--plan=p1-5deb50db6e89a1f"}, 2, "invalid_params.plan", "p1- and 16 hex"},
	} {
		r := env.Venom(c.args[0], c.args[1:]...).Fails(t, c.exit, c.code)
		require.Contains(t, r.Stderr, c.text, "%v", c.args)
		require.Contains(t, r.Stderr, "hint: ", "%v gives no hint", c.args)
		env.Venom(c.args[0], append(c.args[1:], "--json")...).Fails(t, c.exit, c.code)
	}
	env.AssertUntouched(t, snap)
	require.Equal(t, logLen, len(env.LogRecords()))
}

// docs/rollback.md#undo: --undo rolls the last rollback back through its safety
// checkpoint, with the same dry run and plan; undoing an undo redoes.
func TestRollback_Undo(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t) // k1
	env.Write("a.txt", "a\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t) // k2
	env.Write("notes.txt", "after the turn\n")
	before := env.RecipeTree()
	res := env.Rollback("k1")
	require.NoFileExists(t, env.Path("a.txt"))
	safety := res.Safety

	// Without --plan, a script gets invalid_params.plan, as for any rollback.
	env.Venom("rollback", "--undo", "--json").Fails(t, 2, "invalid_params.plan")
	dry := env.DryRun("--undo")
	require.Equal(t, safety, dry.Checkpoint)
	// A plan is quoted with --undo, or with the checkpoint it named.
	env.Venom("rollback", "--undo", "--plan=p1-0000000000000000", "--json").Fails(t, 5, "conflict.rollback_stale")
	out := env.Venom("rollback", "--undo", "--plan="+dry.Plan).OK(t).Stdout
	require.Contains(t, out, "↺ Rolled back to "+safety)
	require.Equal(t, before, env.RecipeTree(), "the undo did not bring the tree back")
	require.Equal(t, "a\n", env.Read("a.txt"))

	// Undo again: back to where the undo started (the tree of k1).
	redo := env.Rollback("--undo", "--agent=a1")
	require.Equal(t, env.Records("rollback.ended")[1]["safety"], redo.Checkpoint)
	require.NoFileExists(t, env.Path("a.txt"))
}

// At a terminal the interactive undo shows its plan, asks,
// and its success line gives the undo command.
func TestRollback_UndoAtTerminal(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	screen, code := env.ptyRun(t, []string{"", "y"}, "rollback", "k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "\n  undo: git venom-rollback --undo")
	require.NoFileExists(t, env.Path("agent.txt"))
	screen, code = env.ptyRun(t, []string{"y"}, "rollback", "--undo")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Undo the rollback of a1 to k1: back to its safety checkpoint.")
	require.Regexp(t, `Roll a1 back to \S*k3`, screen)
	require.Contains(t, screen, "Roll back? [y/N]")
	require.Contains(t, screen, "↺ Rolled back to k3 (after t1) · 1 file · safety k5\r\n  undo: git venom-rollback --undo")
	require.Equal(t, "agent\n", env.Read("agent.txt"))
	require.Equal(t, "a person's edit\n", env.Read("README.md"))
}

// Ctrl-C or Ctrl-D at either prompt of the interactive
// rollback ends it at once: exit 130, nothing changed (files, index, HEAD,
// refs, the log), no further prompt.
func TestRollback_InteractiveCtrlCAndCtrlD(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		answers []string
		prompts int // the prompts the screen shows
	}{
		{"ctrl-c at keep/overwrite", []string{"\x03"}, 1},
		{"ctrl-d at keep/overwrite", []string{"\x04"}, 1},
		{"ctrl-c at confirm", []string{"", "\x03"}, 2},
		{"ctrl-d at confirm", []string{"o", "\x04"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := interactiveEnv(t)
			snap := env.Snapshot()
			logLen := len(env.LogRecords())
			refs := env.Git("for-each-ref", "refs/venom")
			screen, code := env.ptyRun(t, c.answers, "rollback", "--checkpoint=k1", "--restore=files")
			require.Equal(t, 130, code, screen)
			require.Contains(t, screen, "Nothing was changed.")
			require.NotContains(t, screen, "Rolled back")
			require.NotContains(t, screen, "error:")
			require.Equal(t, c.prompts, strings.Count(screen, "[K/o]")+strings.Count(screen, "[y/N]"), screen)
			if c.answers[len(c.answers)-1] == "\x03" {
				require.Contains(t, screen, "^C", "the terminal echoes the key")
			}
			env.AssertUntouched(t, snap)
			require.Equal(t, logLen, len(env.LogRecords()))
			require.Equal(t, refs, env.Git("for-each-ref", "refs/venom"))
		})
	}
}

// TestRollback_PersonsOwnCheckpoints (docs/rollback.md#your-own-checkpoints):
// an agent that never had a turn and has no harness is the person's own, so
// nothing is outside its turns: the plan says "your edits", the rollback
// needs no --outside, and the safety checkpoint still holds what it
// overwrites. Once it has had a turn, or shares its tree, outside edits
// count again.
func TestRollback_PersonsOwnCheckpoints(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "saved\n")
	env.Take(t, "--agent=a1") // k1
	env.Write("a.txt", "edited\n")
	env.Write("n.txt", "new\n")

	dry := env.DryRun("--agent=a1", "k1")
	assert.Equal(t, map[string]string{"a.txt": "turn", "n.txt": "turn"}, dry.Classes())
	assert.Empty(t, dry.LeftReasons())
	screen := env.Venom("rollback", "--agent=a1", "k1", "--dry-run").OK(t).Stdout
	assert.Contains(t, screen, "Roll a1 back to k1, as you saved it.\nWorktree:\n  "+env.Dir+"\nHEAD, the branch and the index stay as they are: the tree is shared.\n")
	assert.Contains(t, screen, "Your edits since k1:\n  modify a.txt\n  delete n.txt\n")
	assert.NotContains(t, screen, "outside")
	assert.Regexp(t, `(?m)^Restores 2 files \(writes \d+ bytes\)\.$`, screen)

	res := env.Rollback("--agent=a1", "k1")
	require.NotNil(t, res.Exact)
	assert.True(t, *res.Exact)
	assert.Equal(t, "saved\n", env.Read("a.txt"))
	assert.NoFileExists(t, env.Path("n.txt"))
	// Nothing is lost: the safety checkpoint holds the edits.
	assert.Equal(t, "edited", env.Git("show", "refs/venom/checkpoints/a1/"+strings.TrimPrefix(res.Safety, "k")+":a.txt"))
	assert.Equal(t, "new", env.Git("show", "refs/venom/checkpoints/a1/"+strings.TrimPrefix(res.Safety, "k")+":n.txt"))

	// A second agent in the same tree: its work is protected again.
	env.Take(t, "--agent=b1")
	env.Write("a.txt", "b1's\n")
	env.Venom("rollback", "--agent=a1", "k1", "--dry-run", "--json").Fails(t, 5, "conflict.outside_edits")
	env.Venom("checkpoint", "clean", "--agent=b1", "--json").OK(t)
	assert.Equal(t, "turn", env.DryRun("--agent=a1", "k1").Classes()["a.txt"])

	// Once a1 has had a turn, a person's edit after it is outside again.
	env.Turn("a1", func() { env.Write("t.txt", "turn\n") })
	env.Write("a.txt", "person's, after the turn\n")
	r := env.Venom("rollback", "--agent=a1", "k1", "--dry-run", "--json").Fails(t, 5, "conflict.outside_edits")
	assert.Contains(t, r.Stdout+r.Stderr, "a.txt")
}

// An undo puts back what the rollback overwrote. Its
// plan listed a person's edit, which the rollback had overwritten, under
// "Changed during the agent's turns"; it now lists every path it puts
// back under one title that says so, and its summary counts no classes.
func TestRollback_UndoPlanSaysWhatItPutsBack(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("agent.txt", "agent\n") }) // k1, k2
	env.Write("README.md", "a person's edit\n")
	env.Rollback("--agent=a1", "--outside=overwrite", "k1")
	require.Equal(t, "hello\n", env.Read("README.md"))

	undo := env.Venom("rollback", "--agent=a1", "--undo", "--dry-run").OK(t).Stdout
	assert.Contains(t, undo, "Put back as they were before the rollback:\n")
	assert.Contains(t, undo, "  modify README.md\n")
	assert.Contains(t, undo, "  create agent.txt\n")
	assert.NotContains(t, undo, "during the agent's turns")
	assert.NotContains(t, undo, "by the agent's edits")
	assert.Regexp(t, `(?m)^Restores 2 files \(writes \d+ bytes\)\.$`, undo)
	env.Rollback("--agent=a1", "--undo")
	assert.Equal(t, "a person's edit\n", env.Read("README.md"))
}

// A checkpoint that cannot bring the conversation back says why in words
// a person reads; --json keeps the reason's code in data.why.
func TestRollback_FilesOnlyRefusalInWords(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.RegisterAs("a1", "claude-code", "in_place")
	env.Checkpoint("--agent=a1", "--reason=turn_start") // k1, t1
	env.Write("x.txt", "mid\n")
	env.Checkpoint("--agent=a1") // k2, inside t1
	env.Write("x.txt", "end\n")
	env.Checkpoint("--agent=a1", "--reason=turn_end") // k3

	r := env.Venom("rollback", "k2", "--dry-run").Fails(t, 5, "conflict.checkpoint_files_only")
	assert.Contains(t, r.Stderr, "error: conflict.checkpoint_files_only: k2 cannot bring the conversation back\n")
	assert.Contains(t, r.Stderr, "\nhint: it was taken inside turn t1; no point of the conversation matches it\n")
	assert.NotContains(t, r.Stderr, "mid_turn")
	for _, l := range strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n") {
		assert.LessOrEqual(t, len([]rune(l)), 80, l)
	}
	var out struct {
		Error struct {
			Message string
			Data    map[string]string
		}
	}
	r = env.Venom("rollback", "k2", "--dry-run", "--json").Fails(t, 5, "conflict.checkpoint_files_only")
	r.JSON(t, &out)
	assert.Equal(t, "mid_turn", out.Error.Data["why"])
	assert.Contains(t, out.Error.Message, "inside turn t1")
}
