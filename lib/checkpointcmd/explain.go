package checkpointcmd

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/explain"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// ExplainCmd says which agent turns made a commit (docs/json.md#explain):
// git venom-checkpoint explain <commit>|<A..B> [--note].
type ExplainCmd struct {
	Revision string `arg:"" name:"commit" help:"A commit, or a range A..B (each commit of it, oldest first)."`
	Note     bool   `name:"note" help:"Also store each commit's explanation as a git note under refs/notes/venom (never the commits, never your notes ref)."`
	// No env: VENOM_AGENT names the caller, not whose turns to look at.
	Agent   []string `name:"agent" sep:"none" help:"Only this agent's turns, or a fetched copy's, named <remote>/<agent> or <remote>/<machine>/<agent> (repeatable; default: every agent here)."`
	Remotes bool     `name:"remotes" help:"Also every fetched copy's turns (git venom-checkpoint fetch)."`
}

// sources reads what --agent and --remotes name: the local agents to keep
// (nil: all of them) and the fetched copies, each checked again
// (share.ReadCopy, share.Untrusted). A copy named with --agent must pass;
// one --remotes finds and that fails is passed over with a warning.
func (c *ExplainCmd) sources(env *cli.Env, s *state.Store, st *agents.State) (map[string]bool, []explain.Copy, error) {
	var only map[string]bool
	var named []string
	for _, id := range c.Agent {
		id, err := share.Named(env.Ctx, s, id)
		if err != nil {
			return nil, nil, err
		}
		if share.IsCopy(id) {
			named = append(named, id)
			continue
		}
		a, err := st.Named(id)
		if err != nil {
			return nil, nil, err
		}
		if only == nil {
			only = map[string]bool{}
		}
		only[a.ID] = true
	}
	if only == nil && len(c.Agent) > 0 {
		only = map[string]bool{} // copies only
	}
	seen := map[string]bool{}
	var copies []explain.Copy
	add := func(id string, must bool) error {
		if seen[id] {
			return nil
		}
		seen[id] = true
		cst, a, err := share.ReadCopy(env.Ctx, s, id)
		if err != nil {
			if must {
				return err
			}
			env.UI.Errorf("warning: passing over the fetched copy %s: %v\n", quote.C(id), err)
			return nil
		}
		share.Untrusted(s, a)
		_, machine, agent := share.Parts(id)
		copies = append(copies, explain.Copy{ID: id, Machine: machine, Agent: agent, State: cst})
		return nil
	}
	for _, id := range named {
		if err := add(id, true); err != nil {
			return nil, nil, err
		}
	}
	if c.Remotes {
		all, err := share.Copies(env.Ctx, s)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range all {
			if err := add(id, false); err != nil {
				return nil, nil, err
			}
		}
	}
	return only, copies, nil
}

// Run explains, prints, and with --note stores the notes.
func (c *ExplainCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	// Every turn ever, however old the commit: the whole log, not the
	// fold snapshot, which leaves old turns out.
	_, st, err := s.ReadWhole()
	if err != nil {
		return err
	}
	commits, err := explain.Revisions(env.Ctx, s.Repo.Git, c.Revision)
	if err != nil {
		return err
	}
	lib, err := s.Repo.Lib()
	if err != nil {
		return err
	}
	only, copies, err := c.sources(env, s, st)
	if err != nil {
		return err
	}
	res, err := explain.Explain(explain.Request{Repo: lib, State: st, Commits: commits, Getenv: env.Getenv,
		Agents: only, Copies: copies})
	if err != nil {
		return err
	}
	if c.Note {
		for i := range res.Commits {
			var b strings.Builder
			b.WriteString("git-venom explain\n\n")
			render(&b, &res.Commits[i], plain)
			if err := explain.StoreNote(env.Ctx, s.Repo.Git, res.Commits[i].Commit, b.String()); err != nil {
				return err
			}
			ref := explain.NotesRef
			res.Commits[i].Note = &ref
		}
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	out := bufio.NewWriterSize(env.UI.Out, 64<<10)
	if len(res.Commits) == 0 {
		fmt.Fprintf(out, "No commits in %s.\n", quote.C(c.Revision))
	}
	st2 := styles{bold: env.UI.OutStyle(color.Bold), dim: env.UI.OutStyle(color.Faint), yellow: env.UI.OutStyle(color.FgYellow)}
	abbrev := abbreviations(env, s, res.Commits)
	for i := range res.Commits {
		if i > 0 {
			fmt.Fprintln(out)
		}
		cm := &res.Commits[i]
		fmt.Fprintf(out, "%s %s\n", st2.yellow(abbrev(cm.Commit)), quote.C(cm.Subject))
		render(out, cm, st2)
		if cm.Note != nil {
			fmt.Fprintf(out, "%s\n", st2.dim("Stored as a note under "+*cm.Note+"."))
		}
	}
	if res.Unavailable > 0 {
		turns := "turns were"
		if res.Unavailable == 1 {
			turns = "turn was"
		}
		fmt.Fprintf(out, "%s\n", st2.dim(fmt.Sprintf("(%d %s not looked at: unfinished, or a checkpoint pruned.)", res.Unavailable, turns)))
	}
	return out.Flush()
}

type styles struct{ bold, dim, yellow ui.Style }

func none(a ...any) string { return fmt.Sprint(a...) }

var plain = styles{bold: none, dim: none, yellow: none}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// abbreviations names each commit as git abbreviates it (core.abbrev,
// else as long as the repository needs), as git log --oneline does; the
// first 12 digits where git cannot say.
func abbreviations(env *cli.Env, s *state.Store, commits []explain.Commit) func(string) string {
	names := map[string]string{}
	if len(commits) > 0 {
		args := []string{"rev-parse", "--short"}
		for _, c := range commits {
			args = append(args, c.Commit)
		}
		if out, err := s.Repo.Git.Run(env.Ctx, args...); err == nil {
			for i, n := range strings.Fields(string(out)) {
				if i < len(commits) && strings.HasPrefix(commits[i].Commit, n) {
					names[commits[i].Commit] = n
				}
			}
		}
	}
	return func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return short(id)
	}
}

// render writes one commit's explanation by turn: each turn with its
// harness, time and prompt, then the files it carried, whole or by hunk;
// then the files or hunks no turn carried.
func render(w io.Writer, cm *explain.Commit, st styles) {
	type carried struct {
		path string
		// what is the words after the path: what of the file a turn
		// carried whole, or which hunks no turn carried; "" lists hunks.
		what  string
		hunks []int
		of    int
	}
	byTurn := map[string][]carried{}
	var orphans []carried
	for _, f := range cm.Files {
		whole := map[string]bool{}
		for _, t := range f.Turns {
			whole[t] = true
		}
		hunks := map[string][]int{}
		var bare []string // hunks some of whose lines no turn carried
		for i, h := range f.Hunks {
			for _, t := range h.Turns {
				hunks[t] = append(hunks[t], i+1)
			}
			switch {
			case h.Unattributed == 0:
			case h.Unattributed == h.Lines:
				bare = append(bare, fmt.Sprintf("hunk %d of %d", i+1, len(f.Hunks)))
			default:
				bare = append(bare, fmt.Sprintf("hunk %d of %d (%d of %d lines)", i+1, len(f.Hunks), h.Unattributed, h.Lines))
			}
		}
		seen := map[string]bool{}
		for _, t := range append(append([]string{}, f.Turns...), keys(hunks)...) {
			if seen[t] {
				continue
			}
			seen[t] = true
			c := carried{path: f.Path, hunks: hunks[t], of: len(f.Hunks)}
			if whole[t] {
				c.what = wholeFile(f)
			}
			byTurn[t] = append(byTurn[t], c)
		}
		switch {
		case len(f.Turns) > 0:
		case len(hunks) == 0:
			orphans = append(orphans, carried{path: f.Path, what: wholeFile(f)})
		default:
			for _, b := range bare {
				orphans = append(orphans, carried{path: f.Path, what: b})
			}
		}
	}
	for _, t := range cm.Turns {
		line := "  " + st.bold(quote.C(t.ID)) + "  " + quote.C(t.Harness)
		if t.Ended != nil {
			line += "  " + quote.C(*t.Ended)
		}
		if t.Session != nil {
			// A long id's turn and a session's uuid pass 80 columns:
			// the session then goes on a line of its own.
			if s := "  session " + quote.C(*t.Session); ui.Width(line+s) <= ui.Columns80 {
				line += s
			} else {
				line += "\n    " + st.dim("session") + " " + quote.C(*t.Session)
			}
		}
		fmt.Fprintln(w, line)
		if t.Copy != "" {
			fmt.Fprintf(w, "    %s %s: agent %s of machine %s\n", st.dim("fetched copy"), quote.C(t.Copy),
				quote.C(t.Agent), quote.C(t.Machine))
		}
		if t.Started == nil {
			// Its changes run from the agent's previous checkpoint: a
			// person's edits in between count as the turn's.
			fmt.Fprintf(w, "    %s\n", st.dim(cut("no turn_start: counted from "+t.Start+", a person's edits too", 76)))
		}
		if t.Prompt != nil {
			fmt.Fprintf(w, "    %s %s\n", st.dim("prompt"), ui.Cut(quote.Always(*t.Prompt), ui.Columns80-len("    prompt ")))
		}
		if t.Tool != nil {
			fmt.Fprintf(w, "    %s %s\n", st.dim("tool"), quote.Text(cut(explain.ToolLine(t), 71)))
		}
		for _, f := range byTurn[t.ID] {
			what := f.what
			if what == "" {
				what = hunkList(f.hunks, f.of)
			}
			pathAndWhat(w, f.path, what, st)
		}
	}
	if len(cm.Files) == 0 {
		fmt.Fprintf(w, "  %s\n", st.dim("No files changed."))
	} else if len(cm.Turns) == 0 {
		fmt.Fprintf(w, "  %s\n", st.dim("No agent turn carried these changes."))
	} else if len(orphans) > 0 {
		fmt.Fprintf(w, "  %s\n", st.dim("Not from a turn:"))
		for _, o := range orphans {
			pathAndWhat(w, o.path, o.what, st)
		}
	}
}

// wholeFile names what a whole-file attribution covers: a text file's
// every line, or a binary file, a deletion or a change of type, which
// have no lines to judge.
func wholeFile(f explain.File) string {
	switch {
	case f.Status == "deleted":
		return "whole file (deleted)"
	case f.Status == "typechange":
		return "whole file (type changed)"
	case f.Binary:
		return "whole file (binary)"
	}
	return "whole file"
}

// pathAndWhat writes a file and what of it a turn carried; a path too
// long for its line has it alone, as a plan does.
func pathAndWhat(w io.Writer, path, what string, st styles) {
	if ui.Width(quote.C(path)+what) <= ui.Columns80-6 {
		fmt.Fprintf(w, "    %s  %s\n", quote.C(path), st.dim(what))
	} else {
		fmt.Fprintf(w, "    %s\n      %s\n", quote.C(path), st.dim(what))
	}
}

func keys(m map[string][]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// hunkList is "hunk 2 of 3" or "hunks 1, 3 of 3".
func hunkList(hunks []int, of int) string {
	s := make([]string, len(hunks))
	for i, h := range hunks {
		s[i] = fmt.Sprint(h)
	}
	word := "hunk"
	if len(hunks) > 1 {
		word = "hunks"
	}
	return fmt.Sprintf("%s %s of %d", word, strings.Join(s, ", "), of)
}
