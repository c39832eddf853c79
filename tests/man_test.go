package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
)

// The man pages are checked against the binaries and the errcode registry,
// so they cannot drift (gh's jsonfieldstest): every flag a command's kong
// help prints is documented, and every registry code sits under EXIT STATUS
// of a page, under its class's exit number.

var manBinaries = []string{"git-venom-checkpoint", "git-venom-rollback", "git-venom-diff"}

// hiddenVerbs are verbs kong's help does not list but users type (take,
// the default verb, is listed since -h shows it).
var hiddenVerbs = map[string][][]string{}

// commonCodes can come from any command: opening the repository, reading
// config and state, parsing the command line.
var commonCodes = []errcode.Code{
	errcode.InvalidParamsUsage, errcode.InvalidParamsConfig, errcode.InvalidParamsAgent,
	errcode.NotFoundAgent, errcode.FailedState, errcode.FailedInternal, errcode.FailedInterrupted,
	errcode.UnsupportedCheckpointNoRepo, errcode.UnsupportedObjectFormat,
	errcode.UnsupportedEnvironment, errcode.UnsupportedNotYet,
}

// pageCodes are the codes each command can return, beyond commonCodes:
// each must be under that page's EXIT STATUS.
var pageCodes = map[string][]errcode.Code{
	"git-venom-checkpoint": {
		errcode.InvalidParamsReason, errcode.InvalidParamsTurn, errcode.InvalidParamsIsolation,
		errcode.InvalidParamsParent, errcode.InvalidParamsCheckpoint, errcode.InvalidParamsHarness, errcode.InvalidParamsFilter,
		errcode.NotFoundTurn, errcode.NotFoundCheckpoint, errcode.ConflictInvalidTransition, errcode.ConflictRollbackRunning,
		errcode.FailedCheckpointGit, errcode.FailedCheckpointTooLarge, errcode.NotFoundCommit, errcode.FailedNote,
		errcode.TimeoutCheckpoint, errcode.TimeoutLock,
	},
	"git-venom-rollback": {
		errcode.InvalidParamsPlan, errcode.InvalidParamsCheckpoint, errcode.InvalidParamsPath,
		errcode.NotFoundCheckpoint, errcode.NotFoundHarnessSession,
		errcode.DeniedAgentCaller,
		errcode.ConflictTurnRunning, errcode.ConflictHandedOver, errcode.ConflictInvalidTransition,
		errcode.ConflictRollbackRunning, errcode.ConflictCheckpointPending, errcode.ConflictLiveChildren,
		errcode.ConflictTreeShared, errcode.ConflictTreeStale, errcode.ConflictGitOperation, errcode.ConflictCheckpointFilesOnly,
		errcode.ConflictHeadMoved, errcode.ConflictCommitsPushed, errcode.ConflictOutsideEdits,
		errcode.ConflictRollbackStale, errcode.ConflictHarnessForkRefused,
		errcode.UnsupportedHarnessCapability,
		errcode.FailedRollbackUndone, errcode.FailedRollbackPartial, errcode.FailedRollbackInterrupted,
		errcode.FailedCheckpointGit, errcode.FailedCheckpointTooLarge, errcode.FailedCheckpointUnsafe,
		errcode.InvalidParamsInto, errcode.FailedCopyChecks, errcode.FailedCopyBudget,
		errcode.TimeoutCheckpoint, errcode.TimeoutLock, errcode.TimeoutHarnessRequest,
	},
	"git-venom-diff": {
		errcode.InvalidParamsCheckpoint, errcode.InvalidParamsPath, errcode.NotFoundCheckpoint,
		errcode.FailedCheckpointGit, errcode.TimeoutCheckpoint, errcode.TimeoutLock,
		errcode.FailedCopyChecks, errcode.FailedCopyBudget,
	},
}

// notReturned are registry codes no command returns, with the identifier
// that would return one: the test fails as soon as lib/ uses it, so that
// whoever starts returning the code documents it.
var notReturned = map[errcode.Code]string{
	errcode.ConflictStaleRequests: "ConflictStaleRequests", // docs/checkpoints.md#agents-turns-and-states: no inbox outside a daemon
	errcode.ConflictLocked:        "ConflictLocked",        // registered; lock waits end in timeout.*
}

// exitNumbers are docs/errors.md#exit-codes's exit codes, in the order pages list them.
var exitNumbers = []int{0, 1, 2, 3, 4, 5, 7, 10}

func TestMan_FlagsDocumented(t *testing.T) {
	t.Parallel()
	for _, bin := range manBinaries {
		t.Run(bin, func(t *testing.T) {
			page := readManPage(t, bin)
			require.Contains(t, page.sections, "OPTIONS", "%s.1 has no OPTIONS", bin)
			options := page.section("OPTIONS")
			synopsis := roffText(page.section("SYNOPSIS").all())
			verbs := helpVerbs(t, bin, nil)
			verbs = append(verbs, hiddenVerbs[bin]...)
			for _, verb := range verbs {
				flags := helpFlags(t, bin, verb)
				name := strings.Join(append([]string{bin}, verb...), " ")
				if len(verb) > 0 {
					assert.True(t, mentions(synopsis, strings.Join(verb, " ")) || mentionsWords(synopsis, verb),
						"SYNOPSIS of %s.1 does not show %q", bin, strings.Join(verb, " "))
				}
				text, ok := options.forVerb(verb)
				if !ok {
					t.Errorf("OPTIONS of %s.1 has no subsection for %q (title it with the verb)", bin, strings.Join(verb, " "))
					continue
				}
				for _, f := range flags {
					assert.True(t, hasFlag(text, f), "%s prints --%s, which OPTIONS of %s.1 does not document", name, f, bin)
				}
			}
		})
	}
}

func TestMan_ExitStatus(t *testing.T) {
	t.Parallel()
	onSomePage := map[errcode.Code]string{}
	for _, bin := range manBinaries {
		t.Run(bin, func(t *testing.T) {
			page := readManPage(t, bin)
			exits, codes := exitStatus(t, page.section("EXIT STATUS").all())
			assert.Equal(t, exitNumbers, exits, "EXIT STATUS of %s.1 must list the exit codes of docs/errors.md#exit-codes, in order", bin)
			for code, exit := range codes {
				if _, ok := errcode.Registry[code]; !ok {
					t.Errorf("%s.1 lists %s, which lib/errcode does not register", bin, code)
					continue
				}
				assert.Equal(t, code.Class().Exit(), exit, "%s.1 lists %s under exit %d", bin, code, exit)
				onSomePage[code] = bin
			}
			for _, code := range append(append([]errcode.Code{}, commonCodes...), pageCodes[bin]...) {
				_, ok := codes[code]
				assert.True(t, ok, "%s can return %s, but its page's EXIT STATUS does not list it", bin, code)
			}
			assert.Contains(t, roffText(page.section("EXIT STATUS").all()), "must be treated as a failure")
		})
	}
	for code := range errcode.Registry {
		page, documented := onSomePage[code]
		if _, ok := notReturned[code]; ok {
			assert.False(t, documented, "%s is listed as not returned, yet %s.1 documents it", code, page)
			continue
		}
		assert.True(t, documented, "registry code %s is under no page's EXIT STATUS", code)
	}
	uses := libSources(t)
	for code, ident := range notReturned {
		for file, src := range uses {
			assert.False(t, strings.Contains(src, "errcode."+ident) || strings.Contains(src, `"`+string(code)+`"`),
				"%s now uses %s: document it under EXIT STATUS and drop it from notReturned", file, code)
		}
	}
}

func TestMan_Renders(t *testing.T) {
	t.Parallel()
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed (apt-get install groff-base, or run tests/run)")
	}
	for _, bin := range manBinaries {
		t.Run(bin, func(t *testing.T) {
			file := filepath.Join(repoRoot(), "man", bin+".1")
			// No warning on any device man may use: a terminal in UTF-8 or
			// in ASCII, and groff's default, PostScript (a glyph one lacks
			// gets a stand-in in the page).
			for _, device := range []string{"utf8", "ascii", "ps"} {
				var out, errb bytes.Buffer
				cmd := exec.Command(groff, "-man", "-T"+device, "-ww", "-z", file)
				cmd.Stdout, cmd.Stderr = &out, &errb
				require.NoError(t, cmd.Run(), errb.String())
				assert.Empty(t, errb.String(), "groff -T%s warns about %s.1", device, bin)
			}
			// Every line fits an 80-column terminal, examples included.
			cmd := exec.Command(groff, "-man", "-Tutf8", "-rLL=80n", "-P-cbou", file)
			rendered, err := cmd.Output()
			require.NoError(t, err)
			for _, line := range strings.Split(string(rendered), "\n") {
				assert.LessOrEqual(t, utf8.RuneCountInString(line), 80, "%s.1 renders wider than 80 columns: %q", bin, line)
			}

			page := readManPage(t, bin)
			for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES", "EXAMPLES", "SEE ALSO"} {
				assert.Contains(t, page.sections, s, "%s.1 has no %s section", bin, s)
			}
			name := roffText(page.section("NAME").all())
			assert.True(t, strings.HasPrefix(strings.TrimSpace(name), bin+" - "), "NAME of %s.1 is %q", bin, name)
			seeAlso := roffText(page.section("SEE ALSO").all())
			for _, other := range manBinaries {
				if other != bin {
					assert.Contains(t, seeAlso, other+"(1)", "SEE ALSO of %s.1", bin)
				}
			}
			files := roffText(page.section("FILES").all())
			assert.Contains(t, files, "refs/venom/checkpoints/")
			assert.Contains(t, files, "$GIT_COMMON_DIR/venom/log.jsonl")
		})
	}
	page := readManPage(t, "git-venom-checkpoint")
	reclaim := roffText(page.section("RECLAIMING SPACE").all())
	// No reflog holds checkpoint commits (refs/venom/ has none, and a
	// checkpoint's parent is HEAD), so the page must not send people to
	// git reflog expire, which would throw their own reflogs away.
	assert.NotContains(t, reclaim, "reflog expire")
	assert.Contains(t, reclaim, "never runs")
	assert.Contains(t, reclaim, "git gc --prune=now")
	files := roffText(page.section("FILES").all())
	assert.Contains(t, files, "$GIT_COMMON_DIR/venom/lock")
	config := roffText(page.section("CONFIGURATION").all())
	for _, key := range []string{"venom.enabled", "venom.maxFileBytes", "venom.maxTotalBytes", "venom.keep", "venom.keepFor", "venom.keepSafety", "venom.timeout", "venom.rollbackNote",
		"venom.copyMaxPaths", "venom.copyMaxDepth", "venom.copyMaxFileBytes", "venom.copyMaxTotalBytes"} {
		assert.Contains(t, config, key, "CONFIGURATION of git-venom-checkpoint.1")
	}
}

// installManPages copies the man pages into the world's share/man, for a
// MANPATH, and returns that folder.
func installManPages(t *testing.T, env *Env) string {
	t.Helper()
	mandir := filepath.Join(env.Root, "share", "man")
	require.NoError(t, os.MkdirAll(filepath.Join(mandir, "man1"), 0o755))
	for _, bin := range manBinaries {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "man", bin+".1"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(mandir, "man1", bin+".1"), b, 0o644))
	}
	return mandir
}

// TestMan_GitHelp runs `git venom-<cmd> --help` as a user does: git turns it
// into `git help`, which runs man on git-venom-<cmd>.
func TestMan_GitHelp(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed (apt-get install man-db, or run tests/run)")
	}
	env := NewBareEnv(t)
	mandir := installManPages(t, env)
	env.Extra = append(env.Extra, "MANPATH="+mandir, "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
	for _, bin := range manBinaries {
		r := env.Venom(strings.TrimPrefix(bin, "git-venom-"), "--help")
		r.OK(t)
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s+`+regexp.QuoteMeta(bin)+` - `), r.Stdout, "git %s --help", strings.TrimPrefix(bin, "git-"))
	}
}

// TestMan_HelpAfterAVerbOpensTheManual: --help anywhere opens the
// command's manual, as git venom-checkpoint --help does through git
// (git help, man): after a verb (list --help), after other flags, at a
// terminal through man's pager and piped as plain text; -h and the help
// verb print the short usage. Without man, --help prints that usage.
func TestMan_HelpAfterAVerbOpensTheManual(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed (apt-get install man-db, or run tests/run)")
	}
	env := NewEnv(t)
	mandir := installManPages(t, env)
	env.Take(t, "--agent=a1")
	manual := []string{"MANPATH=" + mandir, "MANWIDTH=80"}
	for _, args := range [][]string{
		{"checkpoint", "list", "--help"},
		{"checkpoint", "hook", "install", "--help"},
		{"checkpoint", "events", "--json", "--help"},
		{"rollback", "k1", "--help"},
		{"diff", "--stat", "--help"},
	} {
		bin := "git-venom-" + args[0]
		// Piped: the page as plain text, as git help prints it.
		r := env.VenomIn(env.Dir, append(manual, "MANPAGER=cat", "PAGER=cat"), args[0], args[1:]...)
		r.OK(t)
		assert.Regexp(t, `(?m)^\s+`+regexp.QuoteMeta(bin)+` - `, r.Stdout, "%v piped", args)
		assert.NotContains(t, r.Stdout, "Flags:", "%v piped", args)
		// At a terminal: through man's pager.
		sc := env.startScreen(t, "git venom-"+strings.Join(args, " "),
			append(manual, "MANPAGER=sed s/^/MANUAL:/")...)
		screen, code := sc.Wait()
		require.Equal(t, 0, code, screen)
		assert.Regexp(t, `MANUAL:\s+`+regexp.QuoteMeta(bin)+` - `, screen, "%v at a terminal", args)
	}
	// -h and help: the usage, never the manual.
	for _, args := range [][]string{{"checkpoint", "list", "-h"}, {"checkpoint", "help", "list"}, {"rollback", "help"}} {
		r := env.VenomIn(env.Dir, append(manual, "MANPAGER=cat"), args[0], args[1:]...)
		r.OK(t)
		assert.Contains(t, r.Stdout, "Usage: git venom-", args)
		assert.NotContains(t, r.Stdout, "NAME", args)
	}
	// No man program: --help is the usage.
	bare := t.TempDir()
	for _, prog := range []string{"git", "sh"} {
		p, err := exec.LookPath(prog)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bare, prog)))
	}
	r := env.run(env.Dir, append(manual, "PATH="+binDir+":"+bare), filepath.Join(binDir, "git-venom-checkpoint"), "list", "--help")
	r.OK(t)
	assert.Contains(t, r.Stdout, "Usage: git venom-checkpoint list")
}

// TestMan_HelpAsAFlagsValueIsTheValue: a flag that needs a value takes
// the next word whatever it is, as git's parse-options does (git commit
// -m --help commits with the message "--help"): --label --help labels a
// checkpoint "--help" and opens no manual; --help elsewhere still does.
func TestMan_HelpAsAFlagsValueIsTheValue(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed (apt-get install man-db, or run tests/run)")
	}
	env := NewEnv(t)
	manual := []string{"MANPATH=" + installManPages(t, env), "MANPAGER=cat", "PAGER=cat"}
	env.Git("commit", "--allow-empty", "-m", "--help")
	assert.Equal(t, "--help", env.Git("log", "-1", "--format=%s"), "git itself")

	for i, value := range []string{"--help", "-h", "--json"} {
		env.Write("a.txt", value+"\n")
		r := env.VenomIn(env.Dir, manual, "checkpoint", "--agent", "a1", "--label", value).OK(t)
		want := fmt.Sprintf("Checkpoint a1/k%d\n", i+1)
		if i == 0 {
			want += "Agent a1 is registered now.\n"
		}
		assert.Equal(t, want, r.Stdout, "--label %s", value)
		assert.NotContains(t, r.Stdout+r.Stderr, "NAME", "--label %s", value)
		got := env.Item(t, "a1", fmt.Sprintf("k%d", i+1)).Label
		require.NotNil(t, got, "--label %s", value)
		assert.Equal(t, value, *got)
	}
	// The same after a verb, with a short flag.
	r := env.VenomIn(env.Dir, manual, "checkpoint", "list", "-n", "--help")
	r.Fails(t, 2, "invalid_params.usage")
	assert.NotContains(t, r.Stdout, "NAME")
	// --help that is no flag's value still opens the manual.
	r = env.VenomIn(env.Dir, manual, "checkpoint", "--label=x", "--help").OK(t)
	assert.Regexp(t, `(?m)^\s+git-venom-checkpoint - `, r.Stdout)
	r = env.VenomIn(env.Dir, manual, "checkpoint", "list", "--agent", "a1", "--help").OK(t)
	assert.Regexp(t, `(?m)^\s+git-venom-checkpoint - `, r.Stdout)
}

// manPage is a page split into its sections, each split into subsections.
type manPage struct {
	sections map[string]*manSection
}

// manSection holds a section's roff lines before its first .SS under "",
// then each subsection under its title.
type manSection struct {
	order  []string
	blocks map[string][]string
}

func (s *manSection) all() []string {
	var out []string
	for _, k := range s.order {
		out = append(out, s.blocks[k]...)
	}
	return out
}

// forVerb is the text documenting a verb's flags: the common part of the
// section and, for a verb, the subsections whose title words name it
// ("hook install|uninstall" names hook and hook install). A page without
// subsections documents every verb in one place.
func (s *manSection) forVerb(verb []string) (string, bool) {
	common := append([]string{}, s.blocks[""]...)
	var matched []string
	subsections := false
	for _, title := range s.order {
		if title == "" {
			continue
		}
		subsections = true
		words := strings.Fields(roffText([]string{title}))
		if strings.EqualFold(strings.Join(words, " "), "common options") {
			common = append(common, s.blocks[title]...)
			continue
		}
		if len(verb) > 0 && titleNames(words, verb) {
			matched = append(matched, s.blocks[title]...)
		}
	}
	if !subsections {
		return roffText(common), true
	}
	if len(verb) > 0 && matched == nil {
		return "", false
	}
	return roffText(append(common, matched...)), true
}

func titleNames(words, verb []string) bool {
	if len(words) < len(verb) {
		return false
	}
	for i, v := range verb {
		found := false
		for _, alt := range strings.Split(words[i], "|") {
			if alt == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func readManPage(t *testing.T, bin string) manPage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "man", bin+".1"))
	require.NoError(t, err)
	page := manPage{sections: map[string]*manSection{}}
	var cur *manSection
	sub := ""
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, ".SH "):
			cur = &manSection{order: []string{""}, blocks: map[string][]string{}}
			page.sections[unquote(strings.TrimPrefix(line, ".SH "))] = cur
			sub = ""
		case strings.HasPrefix(line, ".SS ") && cur != nil:
			sub = unquote(strings.TrimPrefix(line, ".SS "))
			cur.order = append(cur.order, sub)
		case cur != nil:
			cur.blocks[sub] = append(cur.blocks[sub], line)
		}
	}
	return page
}

// section returns a section, empty when the page has none.
func (p manPage) section(name string) *manSection {
	if s := p.sections[name]; s != nil {
		return s
	}
	return &manSection{blocks: map[string][]string{}}
}

func unquote(s string) string {
	return strings.Trim(strings.TrimSpace(s), `"`)
}

var (
	fontEscape = regexp.MustCompile(`\\f(\[[^\]]*\]|\(..|.)`)
	macroLine  = regexp.MustCompile(`^\.(B|I|BR|BI|IB|IR|RB|RI|SY|OP)\s+`)
)

// roffText turns roff lines into the text a reader sees, near enough to
// search for flags and codes: macro names and font changes go, escapes
// become their characters, and macro arguments lose their quotes.
func roffText(lines []string) string {
	var b strings.Builder
	for _, line := range lines {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			if !macroLine.MatchString(line) {
				continue
			}
			line = macroLine.ReplaceAllString(line, "")
			line = strings.ReplaceAll(line, `"`, "")
		}
		line = fontEscape.ReplaceAllString(line, "")
		line = strings.NewReplacer(`\-`, "-", `\:`, "", `\ `, " ", `\e`, `\`, `\(em`, "-", `\&`, "").Replace(line)
		b.WriteString(line)
		b.WriteString("\n")
	}
	return b.String()
}

func hasFlag(text, flag string) bool {
	re := regexp.MustCompile(`(^|[^a-z0-9-])--` + regexp.QuoteMeta(flag) + `($|[^a-z0-9-])`)
	return re.MatchString(text)
}

func mentions(text, s string) bool {
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(s) + `($|\s)`).MatchString(text)
}

// mentionsWords allows a synopsis that writes a verb's words as choices:
// "hook {install | uninstall}" shows hook install.
func mentionsWords(text string, verb []string) bool {
	for _, w := range verb {
		if !mentions(strings.NewReplacer("{", " ", "}", " ", "|", " ", "[", " ", "]", " ").Replace(text), w) {
			return false
		}
	}
	return true
}

// help runs `<bin> <verb...> -h`, reaching the binary directly.
func help(t *testing.T, bin string, verb []string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, bin), append(append([]string{}, verb...), "-h")...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + gitDir + ":/usr/bin:/bin", "HOME=" + cmd.Dir, "LANG=C", "TERM=dumb"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s -h:\n%s", bin, strings.Join(verb, " "), out)
	// The bare command's help ends with its default verb's, which is
	// checked as that verb.
	text, _, _ := strings.Cut(string(out), "\nWith no verb, ")
	return text
}

var (
	helpHeading = regexp.MustCompile(`^([A-Z][A-Za-z ]*):$`)
	helpFlag    = regexp.MustCompile(`^\s+(?:-\w, )?--(?:\[no-\])?([a-z0-9][a-z0-9-]*)`)
)

// helpSections splits kong's help into its headed sections.
func helpSections(out string) map[string][]string {
	sections := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if m := helpHeading.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		sections[cur] = append(sections[cur], line)
	}
	return sections
}

// helpFlags lists the long flags kong prints for a verb.
func helpFlags(t *testing.T, bin string, verb []string) []string {
	t.Helper()
	var flags []string
	for _, line := range helpSections(help(t, bin, verb))["Flags"] {
		if m := helpFlag.FindStringSubmatch(line); m != nil {
			flags = append(flags, m[1])
		}
	}
	require.Contains(t, flags, "help", "%s %v -h printed no flags", bin, verb)
	return flags
}

// helpVerbs walks kong's "Commands:" lists from verb down, returning every
// command path (the root as an empty path).
func helpVerbs(t *testing.T, bin string, verb []string) [][]string {
	t.Helper()
	paths := [][]string{verb}
	if len(verb) > 3 {
		return paths
	}
	seen := map[string]bool{}
	for _, line := range helpSections(help(t, bin, verb))["Commands"] {
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue // a wrapped description
		}
		words := strings.Fields(strings.SplitN(strings.TrimSpace(line), "  ", 2)[0])
		var name []string
		for _, w := range words {
			if strings.HasPrefix(w, "<") || strings.HasPrefix(w, "[") || strings.HasPrefix(w, "-") {
				break
			}
			name = append(name, w)
		}
		// kong may print a nested command with its parents' words.
		for i := 0; i < len(verb) && len(name) > 1 && name[0] == verb[i]; i++ {
			name = name[1:]
		}
		if len(name) == 0 || seen[strings.Join(name, " ")] {
			continue
		}
		seen[strings.Join(name, " ")] = true
		child := append(append([]string{}, verb...), name...)
		paths = append(paths, helpVerbs(t, bin, child)...)
	}
	return paths
}

var exitTag = regexp.MustCompile(`^[a-z_]+\.[a-z_]+$`)

// exitStatus reads the .TP tags of EXIT STATUS: exit numbers, and the codes
// listed under each.
func exitStatus(t *testing.T, lines []string) ([]int, map[errcode.Code]int) {
	t.Helper()
	var exits []int
	codes := map[errcode.Code]int{}
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != ".TP" {
			continue
		}
		tag := strings.TrimSpace(roffText(lines[i+1 : i+2]))
		if n, err := strconv.Atoi(tag); err == nil {
			exits = append(exits, n)
			continue
		}
		if exitTag.MatchString(tag) {
			require.NotEmpty(t, exits, "code %s before any exit number", tag)
			codes[errcode.Code(tag)] = exits[len(exits)-1]
		}
	}
	return exits, codes
}

// libSources maps each Go file of lib/ except the registry to its text.
func libSources(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(repoRoot(), "lib")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "errcode" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, repoRoot()+"/")] = string(b)
		return err
	})
	require.NoError(t, err)
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.NotEmpty(t, keys)
	return out
}

// TestMan_Structure: every page, git-venom.1 too,
// renders through man -l and groff -ww without a warning; a .YS closes an
// open .SY (one elsewhere garbled help's entry); in OPTIONS a flag's line
// follows .TP (a missing one merged --json into --name-only); and every
// flag a verb's subsection documents is one the parser's grammar has (its
// -h), so a page cannot keep a flag that is gone.
func TestMan_Structure(t *testing.T) {
	t.Parallel()
	pages := append([]string{"git-venom"}, manBinaries...)
	groff, gerr := exec.LookPath("groff")
	_, merr := exec.LookPath("man")
	for _, bin := range pages {
		file := filepath.Join(repoRoot(), "man", bin+".1")
		if gerr == nil {
			var errb bytes.Buffer
			cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", file)
			cmd.Stderr = &errb
			require.NoError(t, cmd.Run(), errb.String())
			assert.Empty(t, errb.String(), "groff -ww warns about %s.1", bin)
		}
		if merr == nil {
			var out, errb bytes.Buffer
			cmd := exec.Command("man", "--warnings=w", "-l", file)
			cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80", "LC_ALL=C.UTF-8")
			cmd.Stdout, cmd.Stderr = &out, &errb
			require.NoError(t, cmd.Run(), errb.String())
			assert.Empty(t, errb.String(), "man -l warns about %s.1", bin)
			assert.Contains(t, out.String(), bin)
		}
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		open, section := false, ""
		for i, line := range lines {
			switch {
			case strings.HasPrefix(line, ".SH "):
				section = unquote(strings.TrimPrefix(line, ".SH "))
			case strings.HasPrefix(line, ".SY"):
				assert.False(t, open, "%s.1:%d: .SY inside a .SY", bin, i+1)
				open = true
			case strings.HasPrefix(line, ".YS"):
				assert.True(t, open, "%s.1:%d: .YS with no .SY open", bin, i+1)
				open = false
			case section == "OPTIONS" && optionLine.MatchString(line):
				prev := lines[i-1]
				assert.True(t, prev == ".TP" || strings.HasPrefix(prev, ".SS") || strings.HasPrefix(prev, ".SH"),
					"%s.1:%d: %q follows %q, not .TP: it runs into the entry before", bin, i+1, line, prev)
			}
		}
		assert.False(t, open, "%s.1 ends inside a .SY", bin)
	}
	for _, bin := range manBinaries {
		options := readManPage(t, bin).section("OPTIONS")
		for _, verb := range helpVerbs(t, bin, nil) {
			have := map[string]bool{}
			for _, f := range helpFlags(t, bin, verb) {
				have[f] = true
			}
			for _, title := range options.order {
				words := strings.Fields(roffText([]string{title}))
				if title == "" && len(options.order) > 1 || title != "" && (len(verb) == 0 || len(words) != len(verb) || !titleNames(words, verb)) {
					continue
				}
				if strings.EqualFold(title, "common options") {
					continue
				}
				blk := options.blocks[title]
				for i, line := range blk {
					m := optionLine.FindStringSubmatch(line)
					if m == nil || i == 0 || blk[i-1] != ".TP" {
						continue
					}
					flag := strings.ReplaceAll(m[1], `\-`, "-")
					assert.True(t, have[flag], "%s.1 documents --%s under %q, which %s %v -h does not have",
						bin, flag, title, bin, verb)
				}
			}
		}
	}
}

// optionLine is an OPTIONS entry's first line naming a long flag.
var optionLine = regexp.MustCompile(`^\.(?:B|BI|BR)\s+(?:\\-[a-zA-Z]\s*"?,\s*"?\s*)?\\-\\-((?:[a-z0-9]|\\-)+)`)
