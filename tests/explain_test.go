package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ExplainResult is `git venom-checkpoint explain --json`.
type ExplainResult struct {
	Commits []struct {
		Commit  string  `json:"commit"`
		Parent  *string `json:"parent"`
		Subject string  `json:"subject"`
		Files   []struct {
			Path   string   `json:"path"`
			Status string   `json:"status"`
			Binary bool     `json:"binary"`
			Turns  []string `json:"turns"`
			Hunks  []struct {
				OldStart int      `json:"old_start"`
				OldLines int      `json:"old_lines"`
				NewStart int      `json:"new_start"`
				NewLines int      `json:"new_lines"`
				Turns    []string `json:"turns"`
				Lines    int      `json:"lines"`
				Unattr   int      `json:"unattributed"`
			} `json:"hunks"`
		} `json:"files"`
		Turns []struct {
			ID      string  `json:"id"`
			Agent   string  `json:"agent"`
			Copy    string  `json:"copy"`
			Machine string  `json:"machine"`
			Turn    string  `json:"turn"`
			Harness string  `json:"harness"`
			Session *string `json:"session"`
			Started *string `json:"started"`
			Ended   *string `json:"ended"`
			Start   string  `json:"start"`
			End     string  `json:"end"`
			Prompt  *string `json:"prompt"`
		} `json:"turns"`
		Note *string `json:"note"`
	} `json:"commits"`
	Unavailable int `json:"turns_unavailable"`
}

func (e *Env) explain(t *testing.T, args ...string) ExplainResult {
	t.Helper()
	var res ExplainResult
	e.Venom("checkpoint", append([]string{"explain", "--json"}, args...)...).OK(t).JSON(t, &res)
	return res
}

// turnOf runs one turn of agent by the command line: turn_start, edit,
// turn_end.
func (e *Env) turnOf(agent string, edit func()) {
	e.t.Helper()
	e.Checkpoint("--agent="+agent, "--reason=turn_start")
	edit()
	e.Checkpoint("--agent="+agent, "--reason=turn_end")
}

// hunkHeaders are git's own -U0 hunk ranges of a commit's file, as
// [old_start, old_lines, new_start, new_lines].
func (e *Env) hunkHeaders(commit, path string) [][4]int {
	e.t.Helper()
	out := e.Git("diff", "-U0", "--no-color", commit+"^", commit, "--", path)
	re := regexp.MustCompile(`(?m)^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)
	var hs [][4]int
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		n := func(s string) int {
			if s == "" {
				return 1
			}
			v, _ := strconv.Atoi(s)
			return v
		}
		hs = append(hs, [4]int{n(m[1]), n(m[2]), n(m[3]), n(m[4])})
	}
	return hs
}

func TestExplain_WholeFileAndHunks(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Write("f.txt", "one\ntwo\nthree\n")
	e.Commit("f")
	// Turn 1 changes a line of f.txt and writes g.txt; turn 2 appends to
	// f.txt and writes a version of h.txt the person then replaces; the
	// person adds a first line to f.txt and writes p.txt.
	e.turnOf("a1", func() {
		e.Write("f.txt", "one\nTWO by t1\nthree\n")
		e.Write("g.txt", "from turn 1\n")
		e.Write("m.txt", "alpha\nbeta\n")
	})
	e.turnOf("a1", func() {
		e.Write("f.txt", "one\nTWO by t1\nthree\nfour by t2\n")
		e.Write("h.txt", "draft\n")
	})
	e.Write("f.txt", "zero by person\none\nTWO by t1\nthree\nfour by t2\n")
	e.Write("h.txt", "final by person\n")
	e.Write("p.txt", "person\n")
	e.Write("m.txt", "alpha\nbeta\n\ngamma by person\n")
	head := e.CommitID("the work")
	snap := e.Snapshot()

	res := e.explain(t, "HEAD")
	require.Len(t, res.Commits, 1)
	c := res.Commits[0]
	assert.Equal(t, head, c.Commit)
	assert.Equal(t, e.Git("rev-parse", "HEAD^"), *c.Parent)
	assert.Equal(t, "the work", c.Subject)
	assert.Len(t, e.VenomRefs(), 3, "k1 to k3: turn 2's turn_start reused k2")
	files := map[string]int{}
	for i, f := range c.Files {
		files[f.Path] = i
	}
	require.Len(t, c.Files, 5, "the files git says the commit changed: %s", e.Git("diff", "--name-only", "HEAD^", "HEAD"))

	// Whole file: g.txt is exactly as turn 1 ended it, and its start lacked it.
	g := c.Files[files["g.txt"]]
	assert.Equal(t, "added", g.Status)
	assert.Equal(t, []string{"a1/t1"}, g.Turns)
	assert.Equal(t, e.Git("rev-parse", "HEAD:g.txt"), e.Git("rev-parse", "refs/venom/checkpoints/a1/2:g.txt"))
	assert.NotEqual(t, 0, e.GitRaw("rev-parse", "-q", "--verify", "refs/venom/checkpoints/a1/1:g.txt").Code)

	// Hunks of f.txt: git's own -U0 ranges, hunk 1 the person's, 2 turn
	// 1's, 3 turn 2's.
	f := c.Files[files["f.txt"]]
	assert.Empty(t, f.Turns, "no turn ended with f.txt as committed")
	want := e.hunkHeaders("HEAD", "f.txt")
	require.Len(t, f.Hunks, len(want))
	for i, h := range f.Hunks {
		assert.Equal(t, want[i], [4]int{h.OldStart, h.OldLines, h.NewStart, h.NewLines}, "hunk %d", i+1)
	}
	require.Len(t, f.Hunks, 3)
	assert.Empty(t, f.Hunks[0].Turns)
	assert.Equal(t, []string{"a1/t1"}, f.Hunks[1].Turns)
	assert.Equal(t, []string{"a1/t2"}, f.Hunks[2].Turns)
	assert.Equal(t, [3]int{1, 0, 0}, [3]int{f.Hunks[0].Unattr, f.Hunks[1].Unattr, f.Hunks[2].Unattr})

	// m.txt is one hunk (a new file) of turn 1's two lines and the
	// person's one; the blank line does not count.
	m := c.Files[files["m.txt"]]
	require.Len(t, m.Hunks, 1)
	assert.Empty(t, m.Turns)
	assert.Equal(t, []string{"a1/t1"}, m.Hunks[0].Turns)
	assert.Equal(t, 3, m.Hunks[0].Lines)
	assert.Equal(t, 1, m.Hunks[0].Unattr)

	// h.txt: turn 2 wrote a draft the person replaced; p.txt: the person's.
	assert.Empty(t, c.Files[files["h.txt"]].Turns)
	assert.Empty(t, c.Files[files["h.txt"]].Hunks[0].Turns)
	assert.Empty(t, c.Files[files["p.txt"]].Turns)

	// The turns, in the log's order, with their checkpoints.
	require.Len(t, c.Turns, 2)
	assert.Equal(t, "a1/t1", c.Turns[0].ID)
	assert.Equal(t, "none", c.Turns[0].Harness)
	assert.Equal(t, "k1", c.Turns[0].Start)
	assert.Equal(t, "k2", c.Turns[0].End)
	assert.Equal(t, "k2", c.Turns[1].Start, "turn 2's turn_start reused k2 (docs/checkpoints.md#reuse)")
	assert.Equal(t, "k3", c.Turns[1].End)
	assert.NotNil(t, c.Turns[0].Ended)
	assert.Nil(t, c.Turns[0].Prompt)
	assert.Nil(t, c.Note)

	// The human form says the same by turn.
	out := e.Venom("checkpoint", "explain", "HEAD").OK(t).Stdout
	// The commit abbreviated as git abbreviates it (core.abbrev).
	assert.True(t, strings.HasPrefix(out, e.Git("rev-parse", "--short", "HEAD")+" "), out)
	e.Git("config", "core.abbrev", "9")
	assert.True(t, strings.HasPrefix(e.Venom("checkpoint", "explain", "HEAD").OK(t).Stdout, e.Git("rev-parse", "--short=9", "HEAD")+" "))
	e.Git("config", "--unset", "core.abbrev")
	assert.Regexp(t, `(?s)a1/t1 .*f\.txt  hunk 2 of 3\n    g\.txt  whole file\n    m\.txt  hunk 1 of 1\n  a1/t2 .*f\.txt  hunk 3 of 3\n  Not from a turn:\n    f\.txt  hunk 1 of 3\n    h\.txt  whole file\n    m\.txt  hunk 1 of 1 \(1 of 3 lines\)\n    p\.txt  whole file\n`, out)
	assert.NotContains(t, out, "\x1b[", "plain when piped")
	e.AssertUntouched(t, snap)
	assert.Empty(t, e.Git("for-each-ref", "refs/notes"), "no note without --note")
}

func TestExplain_DeletionAndTurnWithoutStart(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Write("old.txt", "old\n")
	e.Write("keep.txt", "keep\n")
	e.Commit("files")
	e.Checkpoint("--agent=a1")
	// A turn a harness started with no turn_start (docs/checkpoints.md#reasons): it runs from
	// the agent's last checkpoint.
	e.Remove("old.txt")
	e.Write("keep.txt", "keep\nmore\n")
	e.Write("blob.bin", "\x00\x01binary\x00")
	e.Checkpoint("--agent=a1", "--reason=turn_end")
	e.Commit("delete old, extend keep")

	c := e.explain(t, "HEAD").Commits[0]
	require.Len(t, c.Files, 3)
	for _, f := range c.Files {
		assert.Equal(t, []string{"a1/t1"}, f.Turns, f.Path)
		if f.Binary {
			assert.Empty(t, f.Hunks, f.Path)
			continue
		}
		require.Len(t, f.Hunks, 1, f.Path)
		assert.Equal(t, []string{"a1/t1"}, f.Hunks[0].Turns, f.Path)
	}
	assert.True(t, c.Files[0].Binary, "blob.bin sorts first")
	assert.Equal(t, "deleted", c.Files[2].Status, "old.txt sorts last")
	require.Len(t, c.Turns, 1)
	assert.Equal(t, "k1", c.Turns[0].Start, "the agent's checkpoint before the turn ended")
	assert.Nil(t, c.Turns[0].Started)

	// The human form says what a whole-file attribution covers where the
	// file has no lines to judge.
	out := e.Venom("checkpoint", "explain", "HEAD").OK(t).Stdout
	assert.Contains(t, out, "\n    blob.bin  whole file (binary)\n", out)
	assert.Contains(t, out, "\n    keep.txt  whole file\n", out)
	assert.Contains(t, out, "\n    old.txt  whole file (deleted)\n", out)
}

// A turn is credited with a commit only if it can have written it, by the
// HEAD its captures recorded: a turn_end with no turn_start taken after
// the commit was made (the commit in its end capture's HEAD) gets none of
// it, and neither does a turn that began after the commit (the commit in
// its start capture's HEAD), though both end with the commit's content
// that their first capture lacked. A turn that began before a commit
// made mid-turn keeps it.
func TestExplain_OnlyTurnsThatBeganBeforeTheCommit(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Checkpoint("--agent=a1") // k1
	e.Write("a.txt", "the line\n")
	e.Commit("a commit before the turn's end")
	e.Checkpoint("--agent=a1", "--reason=turn_end") // t1, no start
	// t1 has no start: the commit may be its own or a person's. It is
	// credited, and the output says the turn counts from k1.
	c := e.explain(t, "HEAD").Commits[0]
	require.Len(t, c.Files, 1)
	assert.Equal(t, []string{"a1/t1"}, c.Files[0].Turns)
	require.Len(t, c.Turns, 1)
	assert.Nil(t, c.Turns[0].Started, "no turn_start: started is null")
	out := e.Venom("checkpoint", "explain", "HEAD").OK(t).Stdout
	assert.Contains(t, out, "a1/t1")
	assert.Contains(t, out, "no turn_start: counted from k1, a person's edits too")

	// The same kind of turn, committed after it ended, is credited.
	e.Write("b.txt", "the turn's line\n")
	e.Checkpoint("--agent=a1", "--reason=turn_end") // t2, no start
	e.Commit("after t2")
	c = e.explain(t, "HEAD").Commits[0]
	assert.Equal(t, []string{"a1/t2"}, c.Files[0].Turns)

	// t3 began before a commit made in the middle of it: credited. t4
	// began after it and wrote the same file back: not credited.
	e.turnOf("a1", func() {
		e.Write("c.txt", "t3's line\n")
		e.Commit("mid-turn")
	})
	mid := strings.TrimSpace(e.Git("rev-parse", "HEAD"))
	e.Remove("c.txt")
	e.turnOf("a1", func() { e.Write("c.txt", "t3's line\n") })
	c = e.explain(t, mid).Commits[0]
	require.Len(t, c.Files, 1)
	assert.Equal(t, []string{"a1/t3"}, c.Files[0].Turns)
	assert.Equal(t, []string{"a1/t3"}, c.Files[0].Hunks[0].Turns)
}

func TestExplain_RangeOldestFirst(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	base := e.Git("rev-parse", "HEAD")
	e.turnOf("a1", func() { e.Write("a.txt", "a\n") })
	e.Commit("a")
	e.turnOf("b2", func() { e.Write("b.txt", "b\n") })
	e.Commit("b")
	e.Write("c.txt", "c\n")
	e.Commit("c by hand")

	res := e.explain(t, base+"..HEAD")
	want := strings.Fields(e.Git("rev-list", "--reverse", base+"..HEAD"))
	require.Len(t, res.Commits, len(want))
	for i, c := range res.Commits {
		assert.Equal(t, want[i], c.Commit)
	}
	assert.Equal(t, []string{"a1/t1"}, res.Commits[0].Files[0].Turns)
	assert.Equal(t, []string{"b2/t1"}, res.Commits[1].Files[0].Turns)
	assert.Empty(t, res.Commits[2].Files[0].Turns)
	assert.Empty(t, res.Commits[2].Turns)
	out := e.Venom("checkpoint", "explain", base+"..HEAD").OK(t).Stdout
	assert.Contains(t, out, "No agent turn carried these changes.")

	// An empty range is no commits, not an error.
	assert.Empty(t, e.explain(t, "HEAD..HEAD").Commits)
}

func TestExplain_NoteUnderVenomRefOnly(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.turnOf("a1", func() { e.Write("a.txt", "a\n") })
	head := e.CommitID("a")
	// The person's own note stays as it is.
	e.Git("notes", "add", "-m", "mine", "HEAD")
	mine := e.Git("rev-parse", "refs/notes/commits")
	branch := e.Git("rev-parse", "refs/heads/main")

	res := e.explain(t, "--note", "HEAD")
	require.NotNil(t, res.Commits[0].Note)
	assert.Equal(t, "refs/notes/venom", *res.Commits[0].Note)
	note := e.Git("notes", "--ref=venom", "show", "HEAD")
	assert.Contains(t, note, "a1/t1")
	assert.Contains(t, note, "a.txt  whole file")
	assert.Equal(t, "mine", e.Git("notes", "show", "HEAD"))
	assert.Equal(t, mine, e.Git("rev-parse", "refs/notes/commits"), "the user's notes ref untouched")
	assert.Equal(t, head, e.Git("rev-parse", "HEAD"), "no commit rewritten")
	assert.Equal(t, branch, e.Git("rev-parse", "refs/heads/main"))

	// Again: the note is replaced, not doubled, in a new notes commit.
	first := e.Git("rev-parse", "refs/notes/venom")
	e.Venom("checkpoint", "explain", "--note", "HEAD").OK(t)
	assert.Equal(t, note, e.Git("notes", "--ref=venom", "show", "HEAD"))
	assert.Equal(t, first, e.Git("rev-parse", "refs/notes/venom^"))
	assert.Equal(t, "refs/notes/commits\nrefs/notes/venom", e.Git("for-each-ref", "--format=%(refname)", "refs/notes"))
}

func TestExplain_BadRevisions(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	for _, rev := range []string{"nosuch", "nosuch..HEAD", "HEAD:README.md"} {
		r := e.Venom("checkpoint", "explain", "--json", rev).Fails(t, 3, "not_found.commit")
		assert.Equal(t, "", r.Stderr, rev)
	}
	e.Venom("checkpoint", "explain", "--", "--output=x").Fails(t, 3, "not_found.commit")
	assert.NoFileExists(t, e.Path("x"))
	e.Venom("checkpoint", "explain").Fails(t, 2, "invalid_params.usage")
	// A repository without agents explains, with no turns.
	c := e.explain(t, "HEAD").Commits[0]
	assert.Empty(t, c.Turns)
	assert.Equal(t, []string{}, c.Files[0].Turns)
}

func TestExplain_PrunedTurnsAreCounted(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.turnOf("a1", func() { e.Write("a.txt", "a\n") })
	e.turnOf("a1", func() { e.Write("b.txt", "b\n") })
	e.Commit("a and b")
	e.SetGlobal("venom.keep", "2")
	e.Venom("checkpoint", "prune", "--agent=a1").OK(t)
	require.Equal(t, 2, len(e.VenomRefs()), "k3 and k4 kept")

	res := e.explain(t, "HEAD")
	assert.Equal(t, 1, res.Unavailable, "turn 1's checkpoints were pruned")
	c := res.Commits[0]
	assert.Empty(t, c.Files[0].Turns, "a.txt: its turn is gone")
	assert.Equal(t, []string{"a1/t2"}, c.Files[1].Turns)
	out := e.Venom("checkpoint", "explain", "HEAD").OK(t).Stdout
	assert.Contains(t, out, "(1 turn was not looked at: unfinished, or a checkpoint pruned.)")
}

func TestExplain_ClaudeCodeTurnsAndPrompts(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Hook("claude-code", e.Payload("claude/hooks/SessionStart.startup.json", nil))
	// Turn 1's prompt_id is the transcript's own; turn 2's is not, so its
	// prompt is found from its last entry (harness_end).
	claudeTurn(t, e, "00000001-aaaa-4000-8000-000000000000", t1End, func() { e.Write("hello.txt", "hello\n") })
	claudeTurn(t, e, "p2", t2End, func() { e.Write("hello.txt", "hello world\n") })
	e.Commit("hello")

	c := e.explain(t, "HEAD").Commits[0]
	require.Len(t, c.Files, 1)
	assert.Equal(t, []string{"claude/t2"}, c.Files[0].Turns, "the file is as turn 2 left it")
	require.Len(t, c.Turns, 1)
	tr := c.Turns[0]
	assert.Equal(t, "claude-code", tr.Harness)
	require.NotNil(t, tr.Session)
	assert.Equal(t, claudeSession, *tr.Session)
	require.NotNil(t, tr.Prompt)
	assert.Equal(t, "Change hello to hello world. Remember BANANA.", *tr.Prompt)

	// Turn 1 for the commit before turn 2, through its promptId.
	e.Git("reset", "-q", "--soft", "HEAD^")
	e.Write("hello.txt", "hello\n")
	e.Commit("hello only")
	c = e.explain(t, "HEAD").Commits[0]
	require.Len(t, c.Turns, 1)
	assert.Equal(t, "claude/t1", c.Turns[0].ID)
	require.NotNil(t, c.Turns[0].Prompt)
	assert.Equal(t, "Create hello.txt containing hello. Remember APPLE.", *c.Turns[0].Prompt)

	// No transcript: the turn still counts, without its prompt.
	require.NoError(t, os.RemoveAll(filepath.Join(e.Home, ".claude")))
	c = e.explain(t, "HEAD").Commits[0]
	require.Len(t, c.Turns, 1)
	assert.Nil(t, c.Turns[0].Prompt)
}

func TestExplain_CodexTurnPrompt(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	rollout, err := os.ReadFile(filepath.Join(hookData, "codex", "rollout-0.171.0-01a22c93-1777-7b03-81d2-cc9f451e14c8.jsonl"))
	require.NoError(t, err)
	sessions := filepath.Join(e.Home, ".codex", "sessions", "2026", "11", "30")
	require.NoError(t, os.MkdirAll(sessions, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sessions,
		"rollout-2026-11-30T13-09-27-01a22c93-1777-7b03-81d2-cc9f451e14c8.jsonl"), rollout, 0o644))
	e.Hook("codex", e.Payload("codex/hooks/SessionStart.startup.json", nil), "--agent=cx")
	e.Hook("codex", e.Payload("codex/hooks/UserPromptSubmit.json", nil), "--agent=cx")
	e.Write("hello.txt", "hello\n")
	e.Hook("codex", e.Payload("codex/hooks/Stop.turn1.json", nil), "--agent=cx")
	e.Hook("codex", e.Payload("codex/hooks/UserPromptSubmit.json", map[string]any{"turn_id": "01a22c93-4615-7e41-bfc6-61fc84931e71"}), "--agent=cx")
	e.Write("hello.txt", "hello world\n")
	e.Write("notes/b.txt", "b\n")
	e.Hook("codex", e.Payload("codex/hooks/Stop.turn2.json", nil), "--agent=cx")
	e.Commit("hello world")

	c := e.explain(t, "HEAD").Commits[0]
	require.Len(t, c.Turns, 1)
	assert.Equal(t, "cx/t2", c.Turns[0].ID)
	assert.Equal(t, "codex", c.Turns[0].Harness)
	require.NotNil(t, c.Turns[0].Prompt)
	assert.Equal(t, "TURN2: change hello to hello world, add notes/b.txt, remember BANANA", *c.Turns[0].Prompt)
}

// The real Claude Code program, its hooks installed by git-venom, runs two
// turns against the mock model; the person then edits one more file and
// commits. explain names each turn with the prompt the real transcript
// holds, and the note is stored where git shows it.
func TestRealClaude_ExplainNamesTurnsAndPrompts(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	c := NewRealClaude(t, e)
	sid := newUUID(t)
	c.Model.Script("make a", mockStep{Tools: []mockTool{Write(e.Path("a.txt"), "one\ntwo\n")}}, mockStep{Text: "made a"})
	c.Model.Script("extend a", mockStep{Tools: []mockTool{Edit(e.Path("a.txt"), "two\n", "two\nthree\n"),
		Write(e.Path("b.txt"), "B\n")}}, mockStep{Text: "extended"})
	c.OK("make a", "--session-id", sid)
	c.OK("extend a and write b\nwith a second line", "--resume", sid)
	e.Write("a.txt", "zero\n"+e.Read("a.txt"))
	e.Write("c.txt", "mine\n")
	e.Tick()
	e.Git("add", "a.txt", "b.txt", "c.txt")
	e.Git("commit", "-q", "-m", "work")

	res := e.explain(t, "--note", "HEAD")
	cm := res.Commits[0]
	require.Len(t, cm.Turns, 2, "%+v", cm)
	for i, prompt := range []string{"make a", "extend a and write b"} {
		assert.Equal(t, fmt.Sprintf("claude/t%d", i+1), cm.Turns[i].ID)
		assert.Equal(t, "claude-code", cm.Turns[i].Harness)
		require.NotNil(t, cm.Turns[i].Session)
		assert.Equal(t, sid, *cm.Turns[i].Session)
		require.NotNil(t, cm.Turns[i].Prompt, "turn %d", i+1)
		assert.Equal(t, prompt, *cm.Turns[i].Prompt, "the first line of the prompt")
	}
	byPath := map[string]int{}
	for i, f := range cm.Files {
		byPath[f.Path] = i
	}
	a := cm.Files[byPath["a.txt"]]
	assert.Empty(t, a.Turns, "the person changed a.txt after the turns")
	require.Len(t, a.Hunks, 1, "a.txt is new in the commit: one hunk")
	assert.Equal(t, []string{"claude/t1", "claude/t2"}, a.Hunks[0].Turns, "each turn added some of its lines")
	assert.Equal(t, 4, a.Hunks[0].Lines)
	assert.Equal(t, 1, a.Hunks[0].Unattr, "zero is the person's")
	assert.Equal(t, []string{"claude/t2"}, cm.Files[byPath["b.txt"]].Turns)
	assert.Empty(t, cm.Files[byPath["c.txt"]].Turns)
	note := e.Git("log", "-1", "--notes=venom", "--format=%N")
	assert.Contains(t, note, `prompt "extend a and write b"`)
	assert.Contains(t, note, "b.txt  whole file")
}

// The shape of explain --json, member by member.
func TestExplain_ResultGolden(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Write("a.txt", "one\n")
	e.Commit("a")
	e.turnOf("a1", func() {
		e.Write("a.txt", "one\ntwo\n")
		e.Write("b.txt", "b\n")
	})
	e.Write("a.txt", "zero\none\ntwo\n")
	e.Commit("work")
	r := e.Venom("checkpoint", "explain", "--json", "HEAD").OK(t)
	times := regexp.MustCompile(`"(started|ended)":"[^"]*"`)
	e.Golden(t, "checkpoint_explain", times.ReplaceAllString(r.Stdout, `"$1":"<ts>"`))
}
