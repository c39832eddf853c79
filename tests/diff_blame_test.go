package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type blameResult struct {
	Path  string `json:"path"`
	Lines []struct {
		Line   int     `json:"line"`
		Text   string  `json:"text"`
		By     string  `json:"by"`
		Turn   *string `json:"turn"`
		Commit *string `json:"commit"`
	} `json:"lines"`
	Turns []struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Turn  string `json:"turn"`
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"turns"`
	Commits []struct {
		Commit  string `json:"commit"`
		Author  string `json:"author"`
		Subject string `json:"subject"`
	} `json:"commits"`
}

// who is each line's author as "a1/t1", "commit:<subject>" or "person".
func (b blameResult) who() []string {
	subjects := map[string]string{}
	for _, c := range b.Commits {
		subjects[c.Commit] = c.Subject
	}
	var out []string
	for _, l := range b.Lines {
		switch l.By {
		case "turn":
			out = append(out, *l.Turn)
		case "commit":
			out = append(out, "commit:"+subjects[*l.Commit])
		default:
			out = append(out, l.By)
		}
	}
	return out
}

// TestDiff_BlameByTurn: each line of a file as it is now is the turn that
// last wrote it, through two agents' turns, a person's commit of a turn's
// lines, a person's edit between turns and one after, and a turn still
// running; lines no turn wrote are git blame's commit, or the person's.
func TestDiff_BlameByTurn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("src/f.txt", "one\ntwo\nthree\nfour\n")
	env.Commit("the first four")
	env.Turn("a1", func() { env.Write("src/f.txt", "one\nTWO by a1\nthree\nfour\nfive by a1\n") })
	env.Commit("what a1 did") // a turn's lines, committed: still the turn's
	env.Write("src/f.txt", "zero by me\none\nTWO by a1\nthree\nfour\nfive by a1\n")
	env.Turn("a2", func() { env.Write("src/f.txt", "zero by me\none\nTWO by a1\nthree\nFOUR by a2\nfive by a1\n") })
	env.Turn("a1", func() { env.Write("src/f.txt", "zero by me\none\nTWO by a1\nthree\nFOUR by a2\nfive by a1, again\n") })
	env.Write("src/f.txt", "zero by me\none\nTWO by a1\nthree\nFOUR by a2\nfive by a1, again\nsix by me\n")

	var got blameResult
	env.Venom("diff", "--blame", "src/f.txt", "--json").OK(t).JSON(t, &got)
	assert.Equal(t, "src/f.txt", got.Path)
	assert.Equal(t, []string{"person", "commit:the first four", "a1/t1", "commit:the first four", "a2/t1", "a1/t2", "person"}, got.who())
	require.Len(t, got.Turns, 3)
	assert.Equal(t, "a1/t1", got.Turns[0].ID)
	assert.Equal(t, "k1", got.Turns[0].Start)
	assert.Equal(t, "k2", got.Turns[0].End)
	for i, l := range got.Lines {
		assert.Equal(t, i+1, l.Line)
	}
	require.Len(t, got.Commits, 1)
	assert.Equal(t, "the first four", got.Commits[0].Subject)
	assert.Equal(t, env.Git("rev-parse", "HEAD~1"), *got.Lines[1].Commit)

	// -L, and the path relative to the current folder, as git reads it.
	var some blameResult
	env.VenomIn(filepath.Join(env.Dir, "src"), nil, "diff", "--blame", "f.txt", "-L", "3,+3", "--json").OK(t).JSON(t, &some)
	assert.Equal(t, []string{"a1/t1", "commit:the first four", "a2/t1"}, some.who())
	assert.Equal(t, 3, some.Lines[0].Line)
	require.Len(t, some.Turns, 2, "only the turns of the lines shown")

	// A turn still running owns what changed since it started.
	env.Venom("checkpoint", "--agent=a2", "--reason=turn_start", "--json").OK(t)
	env.Write("src/f.txt", "zero by me\none\nTWO by a1\nTHREE by a2 now\nFOUR by a2\nfive by a1, again\nsix by me\n")
	env.Venom("diff", "--blame", "src/f.txt", "--json").OK(t).JSON(t, &got)
	assert.Equal(t, []string{"person", "commit:the first four", "a1/t1", "a2/t2", "a2/t1", "a1/t2", "person"}, got.who())

	// The text: one line each, as git blame's "<id> (<who> <time>
	// <line>) <text>", a commit abbreviated as git abbreviates it; then
	// the turns and commits.
	text := env.Venom("diff", "--blame", "src/f.txt").OK(t).Stdout
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	short := env.Git("rev-parse", "--short", "HEAD~1")
	assert.Regexp(t, `^00000000 \(Not Committed Yet +1\) zero by me$`, lines[0])
	assert.Regexp(t, `^`+short+` +\(\S.* +\d{4}-\d\d-\d\d \d\d:\d\d 2\) one$`, lines[1])
	// a1 has no harness (a plain --agent, as the log registered it): its
	// turn's line says so, not "agent", which a person's or a script's
	// turns are not; a harness's turn names it (TestToolCalls_BlameExplainAndList).
	registered := ""
	for _, rec := range env.LogRecords() {
		if rec["type"] == "agent.registered" && rec["agent"] == "a1" {
			registered, _ = rec["harness"].(string)
		}
	}
	require.Contains(t, []string{"", "none"}, registered)
	assert.Regexp(t, `^a1/t1 +\(no harness +\d{4}-\d\d-\d\d \d\d:\d\d 3\) TWO by a1$`, lines[2])
	assert.NotContains(t, text, "(agent ")
	assert.Equal(t, strings.Index(lines[0], "("), strings.Index(lines[2], "("), "the columns line up")
	assert.Equal(t, strings.Index(lines[0], ")"), strings.Index(lines[2], ")"), "the columns line up")
	assert.Contains(t, text, "the first four")
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), 80, l)
	}
	env.Git("config", "core.abbrev", "12")
	text = env.Venom("diff", "--blame", "src/f.txt").OK(t).Stdout
	assert.Regexp(t, `(?m)^`+env.Git("rev-parse", "--short=12", "HEAD~1")+` \(`, text, "core.abbrev")

	// Refusals.
	env.Venom("diff", "--blame", "src/none.txt", "--json").Fails(t, 2, "invalid_params.path")
	env.Venom("diff", "--blame", "src", "--json").Fails(t, 2, "invalid_params.path")
	env.Venom("diff", "--blame", "../x", "--json").Fails(t, 2, "invalid_params.path")
	// A link that leads out of the tree is not followed; a current folder
	// reached through a link is the tree's.
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	require.NoError(t, os.Symlink(outside, env.Path("out")))
	r := env.Venom("diff", "--blame", "out/secret.txt", "--json")
	r.Fails(t, 2, "invalid_params.path")
	assert.NotContains(t, r.Stdout, "secret\n")
	via := filepath.Join(t.TempDir(), "via")
	require.NoError(t, os.Symlink(env.Dir, via))
	env.VenomIn(filepath.Join(via, "src"), nil, "diff", "--blame", "f.txt", "--json").OK(t)
	env.Venom("diff", "--blame", "src/f.txt", "-L", "5,2", "--json").Fails(t, 2, "invalid_params.usage")
	env.Venom("diff", "--blame", "src/f.txt", "k1", "--json").Fails(t, 2, "invalid_params.usage")
	env.Venom("diff", "k1", "-L", "1,2", "--json").Fails(t, 2, "invalid_params.usage")
}

// TestDiff_BlameOfAFileNoCommitHolds: a new file a turn made, never
// committed: git blame cannot name a commit, and the lines are the
// turn's and the person's.
func TestDiff_BlameOfAFileNoCommitHolds(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("new.txt", "a\nb\n") })
	env.Write("new.txt", "a\nb\nc by me\n")
	var got blameResult
	env.Venom("diff", "--blame", "new.txt", "--json").OK(t).JSON(t, &got)
	assert.Equal(t, []string{"a1/t1", "a1/t1", "person"}, got.who())
	assert.Empty(t, got.Commits)
}
