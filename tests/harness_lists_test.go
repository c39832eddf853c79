package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/harness"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// harnessList is a list of the harnesses written in a page: the text
// between before and after, n times in the file, which must read as text
// does, whitespace aside. oneLine: the list does not span lines (it is
// found by its line).
type harnessList struct {
	file, before, after string
	n                   int
	oneLine             bool
	text                string
}

// harnessLists are the lists of the harnesses the pages write, each as
// the harnesses of kinds make it.
func harnessLists(kinds []*kind.Kind) []harnessList {
	var names, agents, titles []string
	for _, k := range kinds {
		names, agents, titles = append(names, k.Name), append(agents, k.Agent), append(titles, k.Title)
	}
	roff := func(s string) string { return strings.ReplaceAll(s, "-", `\-`) }
	bold := func(s string) string { return `\fB` + roff(s) + `\fR` }
	code := func(s string) string { return "`" + s + "`" }
	each := func(f func(string) string, items []string) []string {
		out := make([]string, len(items))
		for i, s := range items {
			out[i] = f(s)
		}
		return out
	}
	and := func(items []string) string {
		return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
	}
	hookBold := func(s string) string { return bold("hook " + s) }
	// hook install's --via: the values of the harnesses that have a
	// choice, and who they are.
	var via, viaTitles []string
	for _, k := range kinds {
		for _, v := range k.Via {
			if !slices.Contains(via, v) {
				via = append(via, v)
			}
		}
		if len(k.Via) > 0 {
			viaTitles = append(viaTitles, k.Title)
		}
	}

	// marks: how each harness marks its shell (kind.Marks), as a list's
	// items; v writes one variable.
	marks := func(v func(name, value string) string) []string {
		var out []string
		for _, k := range kinds {
			for _, vars := range k.Marks {
				var all []string
				for _, nv := range vars {
					name, value, _ := strings.Cut(nv, "=")
					all = append(all, v(name, value))
				}
				out = append(out, strings.Join(all, " with "))
			}
		}
		return out
	}
	roffVar := func(name, value string) string {
		if value == "" {
			return bold(name)
		}
		return bold(name) + "=" + value
	}
	mdVar := func(name, value string) string {
		if value == "" {
			return code(name)
		}
		return code(name + "=" + value)
	}
	// The scopes' files in the worktree: the local ones, and the project
	// ones that differ (the harnesses of the others: "as local").
	local, project := where(kinds, harness.ScopeLocal), where(kinds, harness.ScopeProject)
	var projectFiles, asLocal []string
	for i, k := range kinds {
		if project[i] == local[i] {
			asLocal = append(asLocal, k.Title)
		} else {
			projectFiles = append(projectFiles, bold(project[i]))
		}
	}
	projectText := harness.Or(projectFiles)
	if len(asLocal) > 0 {
		projectText += " (" + and(asLocal) + ": as local)"
	}
	const page = "man/git-venom-checkpoint.1"
	return []harnessList{
		// A synopsis line may break after a bar.
		{file: page, before: "\n{", after: "}\n[\\fB\\-\\-agent\\fR", n: 2, oneLine: true,
			text: strings.Join(each(bold, names), `\ | `)},
		{file: page, before: `.BR hook " {" `, after: " }\n", n: 1, oneLine: true,
			text: strings.Join(each(roff, names), ` " | " `)},
		{file: page, before: `.BR "hook install" " {" `, after: " }\n", n: 1, oneLine: true,
			text: strings.Join(each(roff, names), ` " | " `)},
		{file: page, before: `.SS "hook `, after: "\"\n.TP\n.BI \\-\\-agent= <id>\nThe agent (default", n: 1, oneLine: true,
			text: strings.Join(each(roff, names), "|")},
		{file: page, before: "session keeps its agent); else ", after: ", unless another", n: 1,
			text: harness.Or(each(bold, agents))},
		{file: page, before: "else one per harness session:\n", after: `, or \fBclaude\-\fR`, n: 1,
			text: harness.Or(each(bold, agents))},
		{file: page, before: "them.\n", after: " always exit 0.", n: 1,
			text: and(each(hookBold, names))},
		{file: page, before: `\fBhook\fR names a harness other than `, after: ".\n.TP\n", n: 1,
			text: harness.Or(each(bold, names))},
		{file: page, before: "(\\fBgit venom\\-rollback\\fR(1)).\n.TP\n", after: "\nMark the caller as an agent.", n: 1,
			oneLine: true, text: strings.Join(marks(roffVar), ", ")},
		{file: "man/git-venom-rollback.1", before: "An agent caller is recognised from \\fBVENOM_CALLER=agent\\fR,\n",
			after: ", as\n\\fBgit venom\\-checkpoint\\fR(1) says.", n: 1, text: harness.Or(marks(roffVar))},
		{file: "docs/harness.md", before: "empty): ", after: ". `VENOM_CALLER=person` overrides", n: 1,
			text: harness.Or(marks(mdVar))},
		{file: page, before: `\fBlocal\fR (default): `, after: "\nin the worktree; \\fBproject\\fR:\n", n: 1,
			text: harness.Or(each(bold, local))},
		{file: page, before: "in the worktree; \\fBproject\\fR:\n", after: "; \\fBuser\\fR:", n: 1, text: projectText},
		{file: page, before: `[\fB\-\-via\fR=`, after: "]\n", n: 1, oneLine: true,
			text: strings.Join(each(bold, via), "|")},
		{file: page, before: ".BI \\-\\-via= how\n", after: " only: ", n: 1, oneLine: true,
			text: harness.Or(viaTitles)},
		{file: "man/git-venom.1", before: `\fBgit venom\-checkpoint hook install `, after: ") lets\n", n: 1,
			text: roff(names[0]) + `\fR (or ` + harness.Or(each(bold, names[1:]))},
		{file: "README.md", before: "`git venom-checkpoint hook install ", after: ") makes the harness", n: 1,
			text: names[0] + "` (or " + harness.Or(each(code, names[1:]))},
		{file: "README.md", before: "session is its own agent: ", after: ", and beside another live", n: 1,
			text: code(agents[0]) + " (or " + harness.Or(each(code, agents[1:])) + ")"},
		{file: "bin/git-venom", before: "'git venom-checkpoint hook install\n", after: " lets the\n", n: 1,
			text: names[0] + "' (or " + harness.Or(names[1:]) + ")"},
		{file: "docs/checkpoints.md", before: "its harness (", after: " or `none`)", n: 1,
			text: strings.Join(each(code, names), ", ")},
		{file: "docs/harness.md", before: "A harness (", after: ") drives git-venom", n: 1,
			text: strings.Join(titles, ", ")},
		{file: "docs/rollback.md", before: "settings\nfile in the worktree: ", after: ". A checkpoint taken", n: 1,
			text: hookFilesText(kinds, code)},
	}
}

// where lists the file hook install writes for each harness of kinds in
// the scope, relative to the worktree's top (harness.Where).
func where(kinds []*kind.Kind, scope string) []string {
	var out []string
	for _, k := range kinds {
		at := k.Settings
		if at == nil {
			at = k.Plugin
		}
		_, name := at(kind.Scope{Name: scope, Top: "/top", Getenv: func(string) string { return "" }})
		out = append(out, name)
	}
	return out
}

// hookFilesText names the files of a worktree where hook install writes
// each harness's hooks: "`a` or `b` (Claude Code), `c` (Codex), ...".
func hookFilesText(kinds []*kind.Kind, code func(string) string) string {
	var out []string
	for _, k := range kinds {
		var files []string
		for _, f := range hookFiles(kinds, "/top") {
			if f.Harness == k.Name {
				files = append(files, code(f.Path))
			}
		}
		if len(files) > 0 {
			out = append(out, harness.Or(files)+" ("+k.Title+")")
		}
	}
	return strings.Join(out, ", ")
}

// hookFiles are harness.HookFiles of kinds: their settings files and
// plugins of the local and project scopes that lie in the worktree.
func hookFiles(kinds []*kind.Kind, top string) []harness.HookFile {
	none := func(string) string { return "" }
	var out []harness.HookFile
	for _, k := range kinds {
		for _, scope := range []string{harness.ScopeLocal, harness.ScopeProject} {
			for _, at := range []func(kind.Scope) (string, string){k.Settings, k.Plugin} {
				if at == nil {
					continue
				}
				root, name := at(kind.Scope{Name: scope, Top: top, Getenv: none})
				if root == top && !slices.ContainsFunc(out, func(f harness.HookFile) bool { return f.Path == name }) {
					out = append(out, harness.HookFile{Path: name, Harness: k.Name})
				}
			}
		}
	}
	return out
}

// staleHarnessLists checks each list of the pages against kinds: what is
// wrong, one line each. With update, it rewrites the lists that differ.
func staleHarnessLists(t *testing.T, kinds []*kind.Kind, update bool) []string {
	t.Helper()
	fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var stale []string
	pages := map[string]string{}
	lists := harnessLists(kinds)
	for _, l := range lists {
		if _, ok := pages[l.file]; !ok {
			b, err := os.ReadFile(filepath.Join(repoRoot(), l.file))
			require.NoError(t, err)
			pages[l.file] = string(b)
		}
		gap := `((?s:.*?))`
		if l.oneLine {
			gap = `([^\n]*?)`
		}
		re := regexp.MustCompile(regexp.QuoteMeta(l.before) + gap + regexp.QuoteMeta(l.after))
		text := pages[l.file]
		found := re.FindAllStringSubmatchIndex(text, -1)
		if len(found) != l.n {
			stale = append(stale, fmt.Sprintf("%s: the list after %s and before %s: found %d times, not %d",
				l.file, oneLine(l.before), oneLine(l.after), len(found), l.n))
			continue
		}
		for i := len(found) - 1; i >= 0; i-- {
			// The list follows the last before ahead of its after.
			to := found[i][3]
			from := strings.LastIndex(text[:to], l.before) + len(l.before)
			got := fold(text[from:to])
			if got == fold(l.text) {
				continue
			}
			stale = append(stale, fmt.Sprintf("%s: after %s:\n  %s\nnot\n  %s", l.file, oneLine(l.before), got, l.text))
			text = text[:from] + l.text + text[to:]
		}
		pages[l.file] = text
	}
	if update && len(stale) > 0 {
		for file, text := range pages {
			require.NoError(t, os.WriteFile(filepath.Join(repoRoot(), file), []byte(text), 0o644))
		}
	}
	return stale
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

// TestHarnessLists_MatchTheRegistry: each list of the harnesses that the
// man pages, README, the overview, docs/ and the wrapper write reads as
// the registry (harness.Kinds) makes it, so that a harness added there
// fails here until every list names it; -update writes them.
func TestHarnessLists_MatchTheRegistry(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, len(harness.Kinds), 5)
	assert.Equal(t, harness.Where(harness.ScopeLocal), where(harness.Kinds, harness.ScopeLocal))
	assert.Equal(t, harness.Where(harness.ScopeProject), where(harness.Kinds, harness.ScopeProject))
	assert.Equal(t, withoutOurs(harness.HookFiles("/top")), hookFiles(harness.Kinds, "/top"),
		"the test's reading of the hook files is not harness.HookFiles'")
	stale := staleHarnessLists(t, harness.Kinds, updatingGolden())
	assert.Empty(t, stale, "lists of the harnesses differ from the registry "+
		"(go test ./tests -run TestHarnessLists -update rewrites them):\n%s", strings.Join(stale, "\n"))

	// A harness added to the registry makes every list stale.
	added := append(slices.Clone(harness.Kinds), &kind.Kind{Name: "new-cli", Title: "New CLI", Agent: "new",
		Settings: func(s kind.Scope) (string, string) { return s.Top, ".new/settings.json" },
		Via:      []string{"auto", "socket"}, Marks: [][]string{{"NEW_CLI=1"}}})
	lists := 0
	for _, l := range harnessLists(added) {
		lists += l.n
	}
	assert.Len(t, staleHarnessLists(t, added, false), lists, "a list does not change with the registry")
}

// withoutOurs drops HookFile.Ours, a function, for comparing.
func withoutOurs(files []harness.HookFile) []harness.HookFile {
	out := slices.Clone(files)
	for i := range out {
		out[i].Ours = nil
	}
	return out
}

// TestHarnessLists_CommandsNameEveryHarness: what the commands print
// (the first checkpoint's hint, hook install -h, an unknown harness's
// error) names every harness of the registry.
func TestHarnessLists_CommandsNameEveryHarness(t *testing.T) {
	t.Parallel()
	namesIn := func(t *testing.T, where, text string) {
		t.Helper()
		for _, n := range harness.Names() {
			assert.Contains(t, text, n, "%s does not name the harness %s:\n%s", where, n, text)
		}
	}
	env := NewEnv(t)
	namesIn(t, "the first checkpoint's hint", env.Venom("checkpoint").Stderr)
	namesIn(t, "the first rollback's hint", env.Venom("rollback", "--dry-run", "k1").Stderr)
	// git-venom-diff is built without the harnesses: its hint says how.
	assert.Contains(t, env.Venom("diff", "k1").Stderr,
		"hint: or let a harness do it: git venom-checkpoint hook install <harness>\n")
	help := env.Venom("checkpoint", "hook", "install", "-h").OK(t).Stdout
	namesIn(t, "hook install -h", strings.Join(strings.Fields(help), " "))
	r := env.Venom("checkpoint", "hook", "install", "no-such-harness")
	r.Fails(t, 2, "invalid_params")
	namesIn(t, "hook install of an unknown harness", r.Stderr)
}
