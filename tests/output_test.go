package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const esc = "\x1b["

// Colour follows git's settings as git's own commands do: --color, then
// color.venom, then color.ui (git -c included), then NO_COLOR and
// CLICOLOR_FORCE, then whether the stream is a terminal.
func TestOutput_ColourFollowsFlagsConfigAndEnvironment(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Extra = []string{"GIT_PAGER=cat"}

	screen, code := env.ptyRun(t, nil, "diff", "k1", "k2")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, esc, "a terminal gets colour by default")

	for _, line := range []string{
		"git -c color.ui=never venom-diff k1 k2",
		"git -c color.venom=false venom-diff k1 k2",
		"git -c color.ui=always venom-diff --color=never k1 k2",
		"NO_COLOR=1 git venom-diff k1 k2",
		"NO_COLOR=1 git venom-checkpoint list",
		"git venom-checkpoint list --color=never",
		"git venom-checkpoint agents --color=never",
	} {
		screen, code := env.ptyRunLine(t, nil, line)
		require.Equal(t, 0, code, "%s: %s", line, screen)
		assert.NotContains(t, screen, esc, line)
		assert.Regexp(t, `a\.txt|k3`, screen, line) // the output itself was shown
	}

	// Piped: plain, unless asked for.
	assert.NotContains(t, env.Venom("diff", "k1", "k2").OK(t).Stdout, esc)
	assert.Contains(t, env.Venom("diff", "k1", "k2", "--color=always").OK(t).Stdout, esc)
	assert.Contains(t, env.VenomIn(env.Dir, []string{"CLICOLOR_FORCE=1"}, "diff", "k1", "k2").OK(t).Stdout, esc)
	assert.NotContains(t, env.VenomIn(env.Dir, []string{"CLICOLOR_FORCE=0"}, "diff", "k1", "k2").OK(t).Stdout, esc)
	assert.Contains(t, env.Venom("checkpoint", "list", "--color=always").OK(t).Stdout, esc)
	env.Git("config", "color.venom", "always")
	assert.Contains(t, env.Venom("checkpoint", "list").OK(t).Stdout, esc, "color.venom=always")
	assert.NotContains(t, env.Venom("checkpoint", "list", "--color=auto").OK(t).Stdout, esc, "the flag wins")
	assert.NotContains(t, env.Venom("checkpoint", "list", "--json").OK(t).Stdout, esc, "JSON is never coloured")
	env.Git("config", "--unset", "color.venom")

	env.Venom("checkpoint", "list", "--color=blue").Fails(t, 2, "invalid_params.usage")
}

// Long output goes through git's pager at a terminal (list, events without
// --follow, diff, the settings files hook install --dry-run shows), never
// when piped or with --no-pager.
func TestOutput_ListEventsAndDiffArePagedAtATerminal(t *testing.T) {
	t.Parallel()
	env := threeCheckpoints(t)
	env.Extra = []string{`GIT_PAGER=printf 'LESS=%s\n' "$LESS"; sed s/^/PAGED:/`}
	for _, args := range [][]string{{"checkpoint", "list"}, {"checkpoint", "events"}, {"diff", "k1"},
		{"checkpoint", "hook", "install", "claude-code", "--dry-run"}} {
		screen, code := env.ptyRun(t, nil, args[0], args[1:]...)
		require.Equal(t, 0, code, screen)
		assert.Contains(t, screen, "LESS=FRX", args)
		assert.Regexp(t, `PAGED:.*(k2|a\.txt|"hooks")`, screen, args)

		screen, code = env.ptyRun(t, nil, args[0], append(args[1:], "--no-pager")...)
		require.Equal(t, 0, code, screen)
		assert.NotContains(t, screen, "PAGED:", args)

		out := env.Venom(args[0], args[1:]...).OK(t).Stdout
		assert.NotContains(t, out, "PAGED:", args)
	}

	// core.pager when GIT_PAGER is unset; PAGER after it; cat is none.
	env.Extra = []string{"PAGER=sed s/^/PAGER:/"}
	env.Git("config", "core.pager", "sed s/^/CORE:/")
	screen, code := env.ptyRun(t, nil, "checkpoint", "list")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "CORE:")
	env.Git("config", "--unset", "core.pager")
	screen, _ = env.ptyRun(t, nil, "checkpoint", "list")
	assert.Contains(t, screen, "PAGER:")
	env.Extra = []string{"PAGER=cat"}
	screen, _ = env.ptyRun(t, nil, "checkpoint", "list")
	assert.True(t, strings.Contains(screen, "k3"), screen)
}

// Tables line up on the screen with colour on: a column starts at the same
// screen column in every row, whatever colour codes or wide characters the
// cells before it hold (a width counts neither).
func TestOutput_TablesLineUpAtATerminalWithColour(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Extra = []string{"GIT_PAGER=cat"}
	// Three agents: a1 in place (guarded: "yes" in yellow), w1 alone in a
	// worktree ("no", plain), f1 in another worktree with a parent
	// ("f1 ← w1", the arrow dimmed).
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--label=日本語のラベル", "--json").OK(t)
	env.Write("a.txt", "1\n")
	env.Venom("checkpoint", "--agent=a1", "--label=plain", "--json").OK(t)
	for _, wt := range []struct{ dir, agent, parent string }{{"wt1", "w1", ""}, {"wt2", "f1", "--parent=w1"}} {
		dir := filepath.Join(env.Root, wt.dir)
		env.Git("worktree", "add", "-q", "-b", wt.dir, dir)
		args := []string{"--agent=" + wt.agent, "--isolation=worktree", "--json"}
		if wt.parent != "" {
			args = append(args, wt.parent)
		}
		env.VenomIn(dir, nil, "checkpoint", args...).OK(t)
	}

	for _, line := range []string{"git venom-checkpoint agents", "git venom-checkpoint list --agent=a1"} {
		screen, code := env.ptyRunLine(t, nil, line)
		require.Equal(t, 0, code, screen)
		require.Contains(t, screen, esc, "%s: colour at a terminal", line)
		rows := screenLines(screen)
		// The agents' trees follow their table, each on a line of its own.
		if i := slices.Index(rows, "TREES"); i > 0 {
			rows = rows[:i]
		}
		require.GreaterOrEqual(t, len(rows), 3, "%s: %q", line, screen)
		assertColumnsLineUp(t, line, rows)
	}
}

var ansiSeq = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)

// screenLines is what the terminal shows, line by line, colour codes
// removed, empty lines dropped.
func screenLines(screen string) []string {
	var lines []string
	for _, l := range strings.Split(ansiSeq.ReplaceAllString(screen, ""), "\n") {
		if l = strings.TrimRight(l, "\r "); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// cellsOnScreen lays a line out on screen columns: a wide (East Asian)
// character takes its column and the next, marked 0. The test's strings
// hold no other wide characters than CJK ones.
func cellsOnScreen(line string) []rune {
	var cols []rune
	for _, r := range line {
		cols = append(cols, r)
		if r >= 0x2E80 && r <= 0x9FFF || r >= 0xAC00 && r <= 0xD7A3 || r >= 0xFF00 && r <= 0xFF60 {
			cols = append(cols, 0)
		}
	}
	return cols
}

// assertColumnsLineUp checks that each column the header names starts, in
// every row, at the header word's screen column: a blank before it, text
// on it.
func assertColumnsLineUp(t *testing.T, what string, rows []string) {
	t.Helper()
	header := cellsOnScreen(rows[0])
	var starts []int
	for c := 1; c < len(header); c++ {
		if header[c-1] == ' ' && header[c] != ' ' {
			starts = append(starts, c)
		}
	}
	require.NotEmpty(t, starts, what)
	for _, row := range rows[1:] {
		cols := cellsOnScreen(row)
		for _, c := range starts {
			ok := c < len(cols) && cols[c-1] == ' ' && cols[c] != ' '
			assert.True(t, ok, "%s: the column at screen column %d is off in\n%s\n%s", what, c, rows[0], row)
		}
	}
}

// resumeAfter lets a command paused at a test point (VENOM_TEST_PAUSE_AT,
// resumable) go on after d: work made to last that long.
func resumeAfter(t *testing.T, file string, d time.Duration) {
	go func() {
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(file); err == nil {
				time.Sleep(d)
				_ = os.Remove(file)
				return
			}
		}
	}()
}

// Work over about a second says so on a terminal's stderr, and clears the
// line when done: a capture with what it stores, a rollback. -q, and a
// stderr that is no terminal, get nothing.
func TestOutput_LongCaptureAndRollbackShowProgressAtATerminal(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	env.Write("big.bin", strings.Repeat("x", 2<<20))
	env.Write("b.txt", "b\n")
	env.Write("c.txt", "c\n")
	pause := filepath.Join(env.Root, "pause")
	slow := []string{"VENOM_TEST_PAUSE_AT=capture-object-write", "VENOM_TEST_PAUSE_FILE=" + pause,
		"VENOM_TEST_PAUSE_RESUME=1"}

	env.Extra = slow
	resumeAfter(t, pause, 2500*time.Millisecond)
	screen, code := env.ptyRun(t, nil, "checkpoint", "--agent=a1")
	require.Equal(t, 0, code, screen)
	// Counts, as git's progress: no seconds once it counts.
	assert.Regexp(t, `Capturing: \d+ files, 2\.00 MiB`, screen)
	assert.NotRegexp(t, `MiB… \d+s`, screen)
	assert.Contains(t, screen, "\r\x1b[K", "the progress line is cleared")
	assert.Regexp(t, `Checkpoint a1/\S*k2`, screen)

	env.Write("c.txt", "c2\n")
	resumeAfter(t, pause, 1500*time.Millisecond)
	screen, code = env.ptyRun(t, nil, "checkpoint", "--agent=a1", "-q")
	require.Equal(t, 0, code, screen)
	assert.NotContains(t, screen, "Capturing", "-q")

	env.Write("c.txt", "c3\n")
	resumeAfter(t, pause, 1500*time.Millisecond)
	r := env.Venom("checkpoint", "--agent=a1")
	r.OK(t)
	assert.NotContains(t, r.Stderr, "Capturing", "stderr is no terminal")

	env.Extra = nil
	plan := env.DryRun("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite").Plan
	env.Extra = []string{"VENOM_TEST_PAUSE_AT=rollback-after-safety", "VENOM_TEST_PAUSE_FILE=" + pause,
		"VENOM_TEST_PAUSE_RESUME=1"}
	resumeAfter(t, pause, 2500*time.Millisecond)
	screen, code = env.ptyRun(t, nil, "rollback", "--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite", "--plan="+plan)
	require.Equal(t, 0, code, screen)
	assert.Regexp(t, `Rolling back to k1… \d+s`, screen)
	assert.Contains(t, screen, "Rolled back to k1")
	assert.NoFileExists(t, env.Path("big.bin"))
}

// Hints are coloured at a terminal as git colours its advice ("hint:"
// lines in yellow), follow color.advice (then color.venom, color.ui),
// and stay plain when piped.
func TestOutput_HintsColouredAsGitAdvice(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	// git's own advice at a terminal, to compare with: git add of an
	// ignored file prints two hint lines.
	env.Write(".gitignore", "x.log\n")
	env.Write("x.log", "x\n")
	gitHint := func() string {
		t.Helper()
		screen, _ := env.startScreen(t, "git add x.log").Wait()
		m := regexp.MustCompile(`(\x1b\[[0-9;]*m)?hint: Use -f if you really want to add them\.(\x1b\[[0-9;]*m)?`).FindStringSubmatch(screen)
		require.NotNil(t, m, "git's hint:\n%q", screen)
		return m[1] + "hint: " + "%s" + m[2]
	}
	ours := func() string {
		t.Helper()
		screen, code := env.ptyRun(t, nil, "rollback", "k99", "--dry-run")
		require.Equal(t, 3, code, screen)
		return screen
	}
	const text = "git venom-checkpoint list shows the checkpoints"
	want := gitHint()
	assert.Equal(t, "\x1b[33mhint: %s\x1b[m", want, "git's default")
	assert.Contains(t, ours(), fmt.Sprintf(want, text))

	// color.advice.hint as git reads it: the same escape as git's.
	for _, c := range []string{"red bold", "#ff0ab3 ul", "214 reverse", "brightblue nobold"} {
		env.Git("config", "color.advice.hint", c)
		want := gitHint()
		assert.Contains(t, want, env.Git("config", "--get-color", "color.advice.hint"), c)
		assert.Contains(t, ours(), fmt.Sprintf(want, text), "color.advice.hint=%s", c)
	}
	env.Git("config", "--unset", "color.advice.hint")

	for _, off := range []string{"false", "never"} {
		env.Git("config", "color.advice", off)
		assert.Equal(t, "hint: %s", gitHint(), "git, color.advice=%s", off)
		screen := ours()
		assert.Contains(t, screen, "\nhint: "+text+"\r\n", "color.advice=%s", off)
		assert.Contains(t, screen, "\x1b[", "the error stays coloured")
	}
	env.Git("config", "--unset", "color.advice")

	env.Git("config", "color.ui", "never")
	assert.NotContains(t, ours(), "\x1b[33m")
	env.Git("config", "color.advice", "always")
	r := env.Venom("rollback", "k99", "--dry-run")
	assert.Contains(t, r.Stderr, "\x1b[33mhint: ", "color.advice=always colours a pipe")
	env.Git("config", "--unset", "color.advice")
	env.Git("config", "--unset", "color.ui")

	env.Git("config", "color.advice.hint", "red")
	r = env.Venom("rollback", "k99", "--dry-run")
	r.Fails(t, 3, "not_found.checkpoint")
	assert.NotContains(t, r.Stderr, "\x1b[", "piped: plain")
}
