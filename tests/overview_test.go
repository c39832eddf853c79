package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// git venom alone, git help venom and shell completion: how a person finds
// the commands.

// scriptPATH puts the source tree's bin/git-venom before the built binaries.
func scriptPATH() string {
	return "PATH=" + filepath.Join(repoRoot(), "bin") + ":" + binDir + ":" + gitDir + ":/usr/bin:/bin"
}

// TestOverview_GitVenomAlone: `git venom` answers with the commands and the
// tour instead of git's "not a git command"; a command written with a
// space is pointed at its dashed name.
func TestOverview_GitVenomAlone(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Extra = append(env.Extra, scriptPATH())
	for _, args := range [][]string{{"venom"}, {"venom", "-h"}, {"venom", "help"}} {
		r := env.GitRaw(args...)
		r.OK(t)
		for _, cmd := range manBinaries {
			assert.Contains(t, r.Stdout, strings.Replace(cmd, "git-", "git ", 1), "%v", args)
		}
		assert.Equal(t, readmeTour(t), scriptTour(t, r.Stdout), "git venom's tour is README's five lines")
		assert.Contains(t, r.Stdout, "git venom-checkpoint help")
	}
	r := env.GitRaw("venom", "rollback", "k1")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "git venom-rollback")
	r = env.GitRaw("venom", "frobnicate")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, "'frobnicate' is not a git-venom command")
}

// TestOverview_ManPage: man/git-venom.1 renders, lists the three commands
// and every verb -h lists, has README's tour, and `git help venom` (which
// git maps to man git-venom because git-venom is on PATH) opens it.
func TestOverview_ManPage(t *testing.T) {
	t.Parallel()
	page := readManPage(t, "git-venom")
	for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "A FIVE-LINE TOUR", "EXIT STATUS", "SEE ALSO"} {
		assert.Contains(t, page.sections, s, "git-venom.1 has no %s section", s)
	}
	commands := roffText(page.section("COMMANDS").all())
	for _, bin := range manBinaries {
		assert.Contains(t, commands, strings.Replace(bin, "git-", "git ", 1))
		assert.Contains(t, roffText(page.section("SEE ALSO").all()), bin+"(1)")
	}
	for _, verb := range helpVerbs(t, "git-venom-checkpoint", nil)[1:] {
		if len(verb) == 1 {
			assert.True(t, mentions(strings.NewReplacer(",", " ", ".", " ", "(", " ").Replace(commands), verb[0]),
				"COMMANDS of git-venom.1 does not list git venom-checkpoint %s", verb[0])
		}
	}
	var tour []string
	for _, l := range strings.Split(roffText(page.section("A FIVE-LINE TOUR").all()), "\n") {
		if strings.HasPrefix(l, "git venom-") && strings.Contains(l, " # ") {
			tour = append(tour, l)
		}
	}
	assert.Equal(t, readmeTour(t), tour, "git-venom.1's tour is README's five lines")

	if groff, err := exec.LookPath("groff"); err == nil {
		var errb bytes.Buffer
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", filepath.Join(repoRoot(), "man", "git-venom.1"))
		cmd.Stderr = &errb
		require.NoError(t, cmd.Run(), errb.String())
		assert.Empty(t, errb.String(), "groff warns about git-venom.1")
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed (apt-get install man-db, or run tests/run)")
	}
	env := NewBareEnv(t)
	mandir := filepath.Join(env.Root, "share", "man")
	require.NoError(t, os.MkdirAll(filepath.Join(mandir, "man1"), 0o755))
	b, err := os.ReadFile(filepath.Join(repoRoot(), "man", "git-venom.1"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(mandir, "man1", "git-venom.1"), b, 0o644))
	env.Extra = append(env.Extra, scriptPATH(), "MANPATH="+mandir, "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
	for _, args := range [][]string{{"help", "venom"}, {"venom", "--help"}} {
		r := env.GitRaw(args...)
		r.OK(t)
		assert.Regexp(t, `(?m)^\s+git-venom - checkpoints and rollback`, r.Stdout, "git %v", args)
	}
}

// readmeTour is README's "Five lines", which are five.
func readmeTour(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)## Five lines\n\n```sh\n(.*?)```").FindStringSubmatch(string(b))
	require.NotNil(t, m, "README has no Five lines block")
	lines := strings.Split(strings.TrimSpace(m[1]), "\n")
	require.Len(t, lines, 5, "README's Five lines")
	return lines
}

// scriptTour is the tour git venom prints.
func scriptTour(t *testing.T, out string) []string {
	t.Helper()
	var tour []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  git venom-") {
			tour = append(tour, strings.TrimPrefix(l, "  "))
		}
	}
	return tour
}

// gitBashCompletion is git's own bash completion, which loads ours.
const gitBashCompletion = "/usr/share/bash-completion/completions/git"

// TestCompletion_Bash runs bash with git's completion and ours loaded, as
// bash does at <TAB> (COMP_WORDS split at = as readline splits them,
// COMP_LINE, COMP_POINT), and reads what it offers: verbs, flags, a flag's
// values, and the repository's agents.
func TestCompletion_Bash(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(gitBashCompletion); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: git's bash completion comes with Debian's git package", gitBashCompletion)
		}
		t.Skipf("%s is missing (Debian's git package has it)", gitBashCompletion)
	}
	env := NewEnv(t)
	env.Take(t, "--agent=a1")
	env.Write("a.txt", "x\n")
	env.Take(t, "--agent=b2")
	env.Write("b.txt", "y\n")
	env.Take(t, "--agent=b2")
	script := `
source ` + gitBashCompletion + `
source "$OURS"
comp() {
	COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
	local IFS=$' \t\n'
	COMP_WORDS=($(sed 's/=/ = /g' <<<"$COMP_LINE"))
	[[ "$COMP_LINE" == *[\ =] ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]}-1))
	COMPREPLY=()
	__git_wrap__git_main
	printf '%s|' "$1"; printf '[%s]' "${COMPREPLY[@]}"; echo
}
comp "git venom-checkpoint li"
comp "git venom-checkpoint list --ag"
comp "git venom-checkpoint list --agent="
comp "git venom-checkpoint --rea"
comp "git venom-checkpoint --reason=turn_"
comp "git venom-checkpoint hook install "
comp "git venom-checkpoint help ex"
comp "git venom-rollback --restore="
comp "git venom-rollback --dry"
comp "git -C . venom-diff --na"
comp "git venom-rollback --agent=b2 "
comp "git venom-rollback --agent b2 k"
comp "git venom-rollback --agent=a1 --checkpoint="
comp "git venom-rollback --agent=a1 k1 "
comp "git venom-diff --agent=b2 k2 "
comp "git venom-diff --agent=b2 k2 k1 "
comp "git venom-checkpoint list --agent=b2 --before="
`
	r := env.run(env.Dir, []string{"OURS=" + filepath.Join(repoRoot(), "completion", "git-venom.bash")}, "bash", "-c", script)
	r.OK(t)
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		line, offered, _ := strings.Cut(l, "|")
		got[line] = offered
	}
	for line, want := range map[string]string{
		"git venom-checkpoint li":             "[list ]",
		"git venom-checkpoint list --ag":      "[--agent=]",
		"git venom-checkpoint list --agent=":  "[a1 ][b2 ]",
		"git venom-checkpoint --rea":          "[--reason=]",
		"git venom-checkpoint --reason=turn_": "[turn_start ][turn_end ]",
		"git venom-checkpoint hook install ":  "[claude-code ][codex ][gemini-cli ][opencode ][qwen-code ]",
		"git venom-checkpoint help ex":        "[explain ]",
		"git venom-rollback --restore=":       "[all ][files ]",
		"git venom-rollback --dry":            "[--dry-run ]",
		"git -C . venom-diff --na":            "[--name-only ]",
		// A checkpoint's place offers the agent's live checkpoints,
		// in number order: rollback takes one, diff two.
		"git venom-rollback --agent=b2 ":                 "[k1 ][k2 ][last ]",
		"git venom-rollback --agent b2 k":                "[k1 ][k2 ]",
		"git venom-rollback --agent=a1 --checkpoint=":    "[k1 ][last ]",
		"git venom-rollback --agent=a1 k1 ":              "[]",
		"git venom-diff --agent=b2 k2 ":                  "[k1 ][k2 ][last ]",
		"git venom-diff --agent=b2 k2 k1 ":               "[]",
		"git venom-checkpoint list --agent=b2 --before=": "[k1 ][k2 ][last ]",
	} {
		assert.Equal(t, want, got[line], "%q<TAB>\n%s", line, r.Stderr)
	}
}
