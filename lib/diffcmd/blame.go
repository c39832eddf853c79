package diffcmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/explain"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// BlameResult is --blame's result (docs/json.md).
type BlameResult struct {
	Path    string         `json:"path"`
	PathB64 string         `json:"path_b64,omitempty"`
	Lines   []BlameLine    `json:"lines"`
	Turns   []explain.Turn `json:"turns"`
	Commits []BlameCommit  `json:"commits"`
	turnOf  map[string]int // index in Turns
	commit  map[string]int // index in Commits
	abbrev  map[string]string
}

// BlameLine is one line of the file now and what last wrote it.
type BlameLine struct {
	Line   int     `json:"line"`
	Text   string  `json:"text"`
	By     string  `json:"by"` // turn, commit or person
	Turn   *string `json:"turn"`
	Commit *string `json:"commit"`
}

// BlameCommit is a commit git blame names for lines no turn wrote.
type BlameCommit struct {
	Commit  string `json:"commit"`
	Author  string `json:"author"`
	Date    string `json:"date"`
	Subject string `json:"subject"`
}

// zeroID is git blame's id for lines not committed yet.
const zeroID = "0000000000000000000000000000000000000000"

// blame is git venom-diff --blame <path>: the file as it is now, each
// line with the turn that last wrote it (explain.BlameFile), and for the
// lines no turn wrote, git blame's commit, or the person when none.
func (c *CLI) blame(env *cli.Env) error {
	if len(c.Args) > 0 || c.From != "" || c.To != "" || c.Stat || c.NameOnly || len(c.Path) > 0 || len(c.dashPaths) > 0 {
		return errcode.Newf(errcode.InvalidParamsUsage, nil, "--blame takes one path and no checkpoints").
			Hint("git venom-diff --blame <path> [-L <start>,<end>]")
	}
	s, st, err := env.Read()
	if err != nil {
		return err
	}
	rel, current, err := blamedFile(s.Repo.Top, env.Dir, c.Blame)
	if err != nil {
		return err
	}
	lib, err := s.Repo.Lib()
	if err != nil {
		return err
	}
	b, err := explain.BlameFile(explain.BlameRequest{Repo: lib, State: st, Tree: s.Repo.Top, Path: rel,
		Current: current, Getenv: env.Getenv})
	if err != nil {
		return err
	}
	res := &BlameResult{Lines: []BlameLine{}, Turns: []explain.Turn{}, Commits: []BlameCommit{},
		turnOf: map[string]int{}, commit: map[string]int{}}
	res.Path, res.PathB64 = quote.JSONPath(rel)
	from, to, err := lineRange(c.LineRange, len(b.Lines))
	if err != nil {
		return err
	}
	var byGit []string
	var infos map[string]BlameCommit
	for _, l := range b.Lines {
		if l.Turn == "" {
			byGit, infos = gitBlame(env, s, rel)
			break
		}
	}
	for i := from - 1; i < to; i++ {
		l := b.Lines[i]
		line := BlameLine{Line: i + 1, Text: l.Text, By: "person"}
		switch {
		case l.Turn != "":
			id := l.Turn
			line.By, line.Turn = "turn", &id
			if _, ok := res.turnOf[id]; !ok {
				res.turnOf[id] = len(res.Turns)
				res.Turns = append(res.Turns, b.Turns[id])
			}
		case i < len(byGit) && byGit[i] != "" && byGit[i] != zeroID:
			id := byGit[i]
			line.By, line.Commit = "commit", &id
			if _, ok := res.commit[id]; !ok {
				res.commit[id] = len(res.Commits)
				res.Commits = append(res.Commits, infos[id])
			}
		}
		res.Lines = append(res.Lines, line)
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	res.abbrev = abbreviate(env, s, res.Commits)
	return c.printBlame(env, res)
}

// abbreviate is each commit's name as git abbreviates it (core.abbrev,
// else as long as the repository needs), or its first 8 digits when git
// cannot say.
func abbreviate(env *cli.Env, s *state.Store, commits []BlameCommit) map[string]string {
	out := map[string]string{}
	args := []string{"rev-parse", "--short"}
	for _, ci := range commits {
		out[ci.Commit] = ci.Commit[:min(8, len(ci.Commit))]
		args = append(args, ci.Commit)
	}
	if len(commits) == 0 {
		return out
	}
	short, err := s.Repo.Git.Run(env.Ctx, args...)
	if err != nil {
		return out
	}
	names := strings.Fields(string(short))
	for i, ci := range commits {
		if i < len(names) && strings.HasPrefix(ci.Commit, names[i]) {
			out[ci.Commit] = names[i]
		}
	}
	return out
}

// blamedFile reads the file --blame names, relative to the current
// folder as git reads paths (pathspec.Resolve: a folder reached through a
// link included); a link is its target's name, as git stores it. It is
// read through an os.Root of the top, so no link leads the read outside
// the tree.
func blamedFile(top, dir, given string) (string, []byte, error) {
	bad := func(why string) error {
		return errcode.Newf(errcode.InvalidParamsPath, map[string]string{"path": given},
			"%s %s", quote.C(given), why).Hint("git venom-diff --blame <file>   names a file of the work tree")
	}
	rel, err := pathspec.Resolve(top, dir, given)
	var pe *pathspec.Error
	switch {
	case errors.As(err, &pe) && !strings.Contains(pe.Reason, "outside"):
		return "", nil, bad("is not a path git would keep")
	case err != nil || rel == "":
		return "", nil, bad("is not a file inside the repository")
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	fi, err := root.Lstat(name)
	switch {
	case err != nil:
		return "", nil, bad("is not there")
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := root.Readlink(name)
		return rel, []byte(target), err
	case !fi.Mode().IsRegular():
		return "", nil, bad("is not a file")
	}
	b, err := root.ReadFile(name)
	return rel, b, err
}

// lineRange reads -L <start>,<end> (or <start>,+<count>, <start>, or
// ,<end>) as git blame does, 1-based and inclusive, within n lines.
func lineRange(spec string, n int) (int, int, error) {
	if spec == "" {
		return 1, n, nil
	}
	bad := errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": []string{"-L", spec}},
		"-L %s: give <start>,<end> or <start>,+<count>, within the file's %d lines", spec, n)
	a, b, ok := strings.Cut(spec, ",")
	from, to := 1, n
	var err error
	if a != "" {
		if from, err = strconv.Atoi(a); err != nil || from < 1 || from > max(n, 1) {
			return 0, 0, bad
		}
	}
	switch {
	case !ok || b == "":
	case strings.HasPrefix(b, "+"):
		k, err := strconv.Atoi(b[1:])
		if err != nil || k < 1 {
			return 0, 0, bad
		}
		to = min(n, from+k-1)
	default:
		if to, err = strconv.Atoi(b); err != nil || to < from {
			return 0, 0, bad
		}
		to = min(to, n)
	}
	return from, to, nil
}

// gitBlame is git blame's commit for each line of the file now (zeroID
// for lines not committed), and each commit's author, date and subject;
// none when git cannot blame it (a file HEAD does not hold).
func gitBlame(env *cli.Env, s *state.Store, rel string) ([]string, map[string]BlameCommit) {
	out, err := s.Repo.Git.Run(env.Ctx, "blame", "--porcelain", "--", rel)
	if err != nil {
		return nil, nil
	}
	var byLine []string
	infos := map[string]BlameCommit{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var cur string
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "\t") {
			byLine = append(byLine, cur)
			continue
		}
		f := strings.Fields(l)
		if len(f) >= 3 && len(f[0]) == 40 {
			cur = f[0]
			if _, ok := infos[cur]; !ok {
				infos[cur] = BlameCommit{Commit: cur}
			}
			continue
		}
		key, val, _ := strings.Cut(l, " ")
		ci := infos[cur]
		switch key {
		case "author":
			ci.Author = val
		case "author-time":
			if t, err := strconv.ParseInt(val, 10, 64); err == nil {
				ci.Date = time.Unix(t, 0).UTC().Format("2006-01-02T15:04:05.000Z")
			}
		case "summary":
			ci.Subject = val
		}
		infos[cur] = ci
	}
	return byLine, infos
}

// printBlame prints each line as git blame does, "<id> (<who> <time>
// <line>) <text>": a turn's id, harness ("no harness" for none) and
// end; a commit's abbreviated name, author and date; a line not committed that no turn wrote as git
// shows it, 00000000 (Not Committed Yet). Then what each turn and commit
// was: a turn's prompt or tool call, a commit's subject.
func (c *CLI) printBlame(env *cli.Env, res *BlameResult) error {
	turnStyle := env.UI.OutStyle(color.FgYellow)
	dim := env.UI.OutStyle(color.Faint)
	plain := func(a ...any) string { return fmt.Sprint(a...) }
	type row struct {
		id, who, when string
		style         func(a ...any) string
	}
	turnWhen := func(t explain.Turn) string {
		switch {
		case t.Ended != nil:
			return shortTime(*t.Ended)
		}
		return "running"
	}
	rowOf := func(l BlameLine) row {
		switch l.By {
		case "turn":
			t := res.Turns[res.turnOf[*l.Turn]]
			// The harness that ran the turn; an agent registered without
			// one (a plain --agent) may be a person's or a script's turns,
			// so the column says what is known, not "agent".
			who := t.Harness
			if who == "" || who == "none" {
				who = "no harness"
			}
			return row{ui.CutMiddle(*l.Turn, 24), who, turnWhen(t), turnStyle}
		case "commit":
			ci := res.Commits[res.commit[*l.Commit]]
			return row{res.abbrev[ci.Commit], quote.Text(ci.Author), shortTime(ci.Date), dim}
		}
		return row{"00000000", "Not Committed Yet", "", plain}
	}
	// Within 80 columns before the text, as git blame's own prefix: an
	// author is cut, never the id.
	idW, whoW, digits := 8, 0, len(strconv.Itoa(len(res.Lines)+res.first()))
	for _, l := range res.Lines {
		r := rowOf(l)
		idW, whoW = max(idW, ui.Width(r.id)), max(whoW, ui.Width(r.who))
	}
	whoW = min(whoW, 18)
	done := env.UI.Page()
	defer done()
	w := bufio.NewWriter(env.UI.Out)
	for _, l := range res.Lines {
		r := rowOf(l)
		who := cut(r.who, whoW)
		fmt.Fprintf(w, "%s (%s%*s %-16s %*d) %s\n", r.style(fmt.Sprintf("%-*s", idW, r.id)), who,
			whoW-ui.Width(who), "", r.when, digits, l.Line, l.Text)
	}
	if len(res.Turns)+len(res.Commits) > 0 {
		fmt.Fprintln(w)
	}
	for _, t := range res.Turns {
		fmt.Fprintf(w, "%s  %s\n", turnStyle(fmt.Sprintf("%-*s", idW, ui.CutMiddle(t.ID, 24))), turnWhen(t))
		if t.Tool != nil {
			fmt.Fprintf(w, "%*s  %s\n", idW, "", quote.Text(cut(explain.ToolLine(t), 76-idW)))
		}
		if t.Prompt != nil {
			fmt.Fprintf(w, "%*s  %s\n", idW, "", quote.Always(cut(*t.Prompt, 76-idW)))
		}
	}
	sort.SliceStable(res.Commits, func(i, j int) bool { return res.Commits[i].Date > res.Commits[j].Date })
	for _, ci := range res.Commits {
		fmt.Fprintf(w, "%s  %s\n", dim(fmt.Sprintf("%-*s", idW, res.abbrev[ci.Commit])), cut(ci.Subject, 76-idW))
	}
	err := w.Flush()
	if env.UI.PagerQuit(err) {
		err = nil
	}
	return err
}

func (r *BlameResult) first() int {
	if len(r.Lines) == 0 {
		return 0
	}
	return r.Lines[0].Line
}

// shortTime is an RFC 3339 time as "2026-12-05 13:04".
func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	return t.Local().Format("2006-01-02 15:04")
}

func cut(s string, n int) string {
	n = max(n, 10)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
