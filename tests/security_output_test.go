package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Human output escapes control characters in every
// stored string (labels, reasons, agent fields, paths, messages quoting
// them) as git quotes paths; --json carries the exact strings.

// evilLabel sets the window title, clears the screen, and forges a row of
// list's table.
const evilLabel = "L\033]0;pwned\007\033[2J\r\nk9  turn_end  t9  0s  3  forged"

// Its escaped form, as git would quote it.
const evilLabelShown = `"L\033]0;pwned\a\033[2J\r\nk9  turn_end  t9  0s  3  forged"`

const (
	evilPath = "ev\033[31mil\r\b.txt" // C0 controls
	c1Path   = "c1\u009b2J.txt"       // U+009B is CSI to a terminal that takes 8-bit controls
	niceName = "café.txt"             // printable non-ASCII, kept in venom's own lines
	evilDir  = "re\033]0;t\007po"     // the repository's folder itself
)

// assertNoControls fails when out holds a byte or rune a terminal obeys:
// C0 controls but the newline, DEL, C1 controls, or invalid UTF-8 (which
// a terminal may read as C1).
func assertNoControls(t *testing.T, what, out string) {
	t.Helper()
	assert.True(t, utf8.ValidString(out), "%s is not valid UTF-8:\n%q", what, out)
	for _, r := range out {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Errorf("%s holds control %U:\n%q", what, r, out)
			return
		}
	}
}

// outputEnv is a repository in a folder whose name holds controls, with
// one agent turn that labelled its first checkpoint evilLabel and created
// files with controls in their names.
func outputEnv(t *testing.T) *Env {
	t.Helper()
	env := NewEnv(t)
	dir := filepath.Join(env.Root, evilDir)
	require.NoError(t, os.Rename(env.Dir, dir))
	env.Dir = dir
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--label="+evilLabel, "--json").OK(t)
	env.Write(evilPath, "one\n")
	env.Write(c1Path, "two\n")
	env.Write(niceName, "three\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	return env
}

func TestSecurity_OutputListAgentsEvents(t *testing.T) {
	t.Parallel()
	env := outputEnv(t)
	// What no command of the suite writes, but a log may hold (an adopted
	// ref's trailer before its check, a hand-edited log): controls in a
	// failure's reason and code.
	env.AppendLog("checkpoint.failed", map[string]any{"agent": "a1", "reason": "turn_end\033[2J",
		"code": "failed.x\033]0;t\007", "message": "m"})

	list := env.Venom("checkpoint", "list", "--agent=a1").OK(t)
	assertNoControls(t, "list", list.Stdout)
	// Quoted, and cut to fit 80 columns: never a row of its own.
	assert.Contains(t, list.Stdout, evilLabelShown[:15])
	assert.Len(t, strings.Split(strings.TrimSuffix(list.Stdout, "\n"), "\n"), 3, "a header and two rows, none forged:\n%s", list.Stdout)
	var l ListResult
	env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t).JSON(t, &l)
	require.Len(t, l.Checkpoints, 2)
	require.NotNil(t, l.Checkpoints[1].Label)
	assert.Equal(t, evilLabel, *l.Checkpoints[1].Label, "--json carries the exact label")

	agents := env.Venom("checkpoint", "agents").OK(t)
	assertNoControls(t, "agents", agents.Stdout)
	assert.Contains(t, agents.Stdout, `"`+filepath.Join(env.Root, `re\033]0;t\apo`)+`"`, "the tree, quoted")
	assert.Contains(t, env.Venom("checkpoint", "agents", "--json").OK(t).Stdout, `re\u001b]0;t\u0007po`)

	events := env.Venom("checkpoint", "events").OK(t)
	assertNoControls(t, "events", events.Stdout)
	assert.Contains(t, events.Stdout, "a1/k1 turn_start "+evilLabelShown[:15])
	assert.Contains(t, events.Stdout, `a1 "turn_end\033[2J" "failed.x\033]0;t\a"`)
	js := env.Venom("checkpoint", "events", "--json").OK(t).Stdout
	assert.Contains(t, js, `"label":"L\u001b]0;pwned\u0007\u001b[2J\r\nk9  turn_end  t9  0s  3  forged"`)

	// git allows a C1 control, as UTF-8, in a ref's name: doctor names it.
	env.Git("update-ref", "refs/venom/checkpoints/a1/x\u009by", "HEAD")
	doc := env.Venom("checkpoint", "doctor")
	assert.NotContains(t, doc.Stderr, "panic:")
	assertNoControls(t, "doctor", doc.Stdout+doc.Stderr)
	assert.Contains(t, doc.Stdout, `refs/venom/checkpoints/a1/x\302\233y`)
}

func TestSecurity_OutputRollbackAndDiffPaths(t *testing.T) {
	t.Parallel()
	env := outputEnv(t)

	dry := env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--dry-run").OK(t)
	assertNoControls(t, "the dry run", dry.Stdout+dry.Stderr)
	assert.Contains(t, dry.Stdout, `"ev\033[31mil\r\b.txt"`)
	assert.Contains(t, dry.Stdout, `"c1\302\2332J.txt"`)
	assert.Contains(t, dry.Stdout, " "+niceName+"\n", "printable non-ASCII is kept")
	got := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files")
	assert.ElementsMatch(t, []string{evilPath, c1Path, niceName}, keysOf(got.Classes()), "--json carries the exact paths")

	for _, args := range [][]string{{"k1", "k2"}, {"k1"}} {
		d := env.Venom("diff", append([]string{"--agent=a1"}, args...)...).OK(t)
		assertNoControls(t, "diff "+strings.Join(args, " "), d.Stdout+d.Stderr)
		// git's own quoting of the headers, as git diff shows them by default.
		assert.Contains(t, d.Stdout, `diff --git "a/ev\033[31mil\r\b.txt" "b/ev\033[31mil\r\b.txt"`)
		assert.Contains(t, d.Stdout, `+++ "b/c1\302\2332J.txt"`)
		assert.Contains(t, d.Stdout, "+one\n", "the bodies are the files' content")
	}
}

func TestSecurity_OutputErrorsAndInstall(t *testing.T) {
	t.Parallel()
	env := outputEnv(t)
	shownDir := `re\033]0;t\apo`

	// hook install names the repository's folder in its lines...
	r := env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	assertNoControls(t, "hook install", r.Stdout)
	assert.Contains(t, r.Stdout, shownDir)
	var res struct {
		Files []struct {
			File string `json:"file"`
		} `json:"files"`
	}
	env.Venom("checkpoint", "hook", "uninstall", "claude-code", "--json").OK(t).JSON(t, &res)
	require.Len(t, res.Files, 1)
	assert.Equal(t, env.Path(".claude/settings.local.json"), res.Files[0].File, "--json carries the exact path")

	// ...and so does its error about a link out of it, on stderr.
	env.Remove(".claude")
	require.NoError(t, os.Symlink("..", env.Path(".claude")))
	e := env.Venom("checkpoint", "hook", "install", "claude-code").Fails(t, 1, "failed.state")
	assertNoControls(t, "the error", e.Stderr)
	assert.Contains(t, e.Stderr, shownDir)
	j := env.Venom("checkpoint", "hook", "install", "claude-code", "--json").Fails(t, 1, "failed.state")
	assert.Contains(t, ErrorOf(t, j).Error.Message, evilDir, "--json carries the exact message")
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The dry run's "Left as they are" line quotes a left reason like every
// stored string: a skipped file's reason comes from the log, which a
// tarball or a group member can plant.
func TestSecurity_OutputLeftReasonFromTheLog(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "10")
	env.Write("big.txt", "more than ten bytes\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Write("a.txt", "a\n")
	env.Remove("big.txt") // so that only k1's record names the reason
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	b, err := os.ReadFile(env.LogPath())
	require.NoError(t, err)
	require.Contains(t, string(b), `"too_big"`)
	planted := strings.ReplaceAll(string(b), `"too_big"`, `"too_big\u001b]0;PWNED\u0007\u001b[2J"`)
	require.NoError(t, os.WriteFile(env.LogPath(), []byte(planted), 0o644))

	dry := env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--dry-run").OK(t)
	require.Contains(t, dry.Stdout, "PWNED", "the planted reason is shown, quoted")
	assertNoControls(t, "the dry run", dry.Stdout+dry.Stderr)
}
