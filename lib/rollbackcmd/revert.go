package rollbackcmd

import (
	"fmt"
	"strings"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/rollback"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// what names what a revert takes back, for a person: "turn t3 (k5..k6)",
// or "the changes from k5 to k6".
func what(turn *string, from, to string) string {
	if turn != nil {
		return fmt.Sprintf("turn %s (%s..%s)", quote.C(*turn), quote.C(from), quote.C(to))
	}
	return fmt.Sprintf("the changes from %s to %s", quote.C(from), quote.C(to))
}

// revertScreen shows a revert's dry run (docs/rollback.md#revert): the
// conflicts first, highlighted, with their lines and who made the later
// change; then what is taken back; then what is left and why.
func revertScreen(env *cli.Env, p *plan.Plan) {
	q := quote.C
	bold := env.UI.OutStyle(color.Bold)
	gold := env.UI.OutStyle(color.FgYellow, color.Bold)
	dim := env.UI.OutStyle(color.Faint)
	r := p.Result().Revert
	// Two lines, each within 80 columns with a harness session's agent id.
	env.UI.Printf("Revert %s of %s.\n", bold(what(r.Turn, r.From, r.To)), q(p.Agent.ID))
	env.UI.Printf("What it changed goes back; every later change stays.\n")
	worktree(env, p.Agent.Tree)
	if p.Conversation.None {
		// No harness, no conversation: nothing to say of one.
		env.UI.Printf("Files only: HEAD, the branch and the index stay as they are.\n")
	} else {
		env.UI.Printf("Files only: HEAD, the branch, the index and the conversation stay as they are.\n")
	}
	if !p.Paths.Empty() {
		env.UI.Printf("%s\n", ui.Wrap("Only "+quote.Join(p.Paths.Shown(), ", ")+": every other file stays as it is.",
			ui.Columns80, "  "))
	}
	var clean, marked, whole, already, left []plan.Change
	for _, c := range p.Changes {
		switch {
		case c.Left == plan.LeftAlready:
			already = append(already, c)
		case c.Left == plan.LeftConflict && c.Rev != nil:
			whole = append(whole, c)
		case c.Left != "":
			left = append(left, c)
		case c.Class == plan.Conflict:
			marked = append(marked, c)
		default:
			clean = append(clean, c)
		}
	}
	if len(marked)+len(whole) > 0 {
		env.UI.Printf("%s\n", gold("Meets later changes:"))
		// The path on its line, what it meets on the next, wrapped: a
		// path and a sentence together pass 80 columns.
		for _, c := range marked {
			env.UI.Printf("  %s %s\n%s\n", gold(fmt.Sprintf("%-6s", c.Change)), gold(q(c.Path)),
				dim(ui.Wrap("    "+c.Rev.Describe()+"; conflict markers at "+linesOf(c.Rev.Markers)+".", ui.Columns80, "")))
		}
		for _, c := range whole {
			env.UI.Printf("  %s %s\n%s\n", gold("left  "), gold(q(c.Path)),
				dim(ui.Wrap("    "+c.Rev.Describe()+": left as it is.", ui.Columns80, "")))
		}
	}
	if len(clean) > 0 {
		env.UI.Printf("Taken back:\n")
		for _, c := range clean {
			env.UI.Printf("  %-6s %s\n", c.Change, q(c.Path))
		}
	}
	if len(clean)+len(marked) == 0 {
		env.UI.Printf("No file changes.\n")
	}
	if len(already)+len(left) > 0 {
		env.UI.Printf("Left as they are:\n")
		for _, c := range already {
			env.UI.Printf("  %s %s\n", q(c.Path), dim("(taken back already)"))
		}
		for _, c := range left {
			d := ""
			if c.Detail != nil {
				d = " " + quote.Text(*c.Detail)
			}
			if c.Left == plan.LeftConflict && c.Detail != nil {
				// A write a conflict left as it is blocks.
				d = ": " + q(*c.Detail) + " stays"
			}
			env.UI.Printf("  %s %s\n", q(c.Path), dim("("+quote.Text(c.Left)+d+")"))
		}
	}
	for _, path := range p.IgnoredEdits {
		env.UI.Printf("  %s %s\n", q(path), dim("(ignored, edited by the turn: cannot be reverted)"))
	}
	if !p.Conversation.None {
		env.UI.Printf("Conversation: stays as it is; the agent's note says what was reverted.\n")
	}
	if len(p.SharedWith) > 0 {
		env.UI.Printf("Shared with %s: they get the note too.\n", quote.Join(p.SharedWith, ", "))
	}
	line := "Reverts " + ui.Plural(len(clean)+len(marked), "file", "files")
	if len(clean)+len(marked) > 0 {
		line += " (writes " + ui.Bytes(p.Bytes) + ")"
	}
	if len(marked) > 0 {
		line += ", " + ui.Thousands(len(marked)) + " with conflict markers"
	}
	if l := len(p.Left()); l > 0 {
		line += "; " + ui.Thousands(l) + " left as " + map[bool]string{true: "it is", false: "they are"}[l == 1]
	}
	env.UI.Printf("%s.\n", ui.Wrap(line, ui.Columns80, ""))
	keptLine(env, p.Kept)
}

// linesOf says runs of lines: "lines 3-9, line 20".
func linesOf(ls []plan.Lines) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return strings.Join(parts, ", ")
}

// revertDone is a revert's transcript row, with the command that undoes
// it, and where conflict markers were written.
func revertDone(env *cli.Env, s *state.Store, r *plan.Result, req rollback.Request) {
	q, tree := quote.C, s.Repo.Top
	n, marked := 0, 0
	for _, rp := range r.Repos {
		n += len(rp.Files)
		for _, f := range rp.Files {
			if f.Class == plan.Conflict {
				marked++
			}
		}
	}
	worktree(env, tree)
	if r.Safety == nil {
		nothingReverted(env, r)
		return
	}
	env.UI.Printf("%s\n  undo: %s\n", ui.Wrap(fmt.Sprintf("↺ Reverted %s · %s · files only · safety %s",
		what(r.Revert.Turn, r.Revert.From, r.Revert.To), plan.Count(n), q(*r.Safety)), ui.Columns80, "  "),
		undoCommand(s, r, req))
	if marked > 0 {
		env.UI.Printf("Conflict markers (<<<<<<< to >>>>>>>) to resolve, as after git revert:\n")
		for _, rp := range r.Repos {
			for _, f := range rp.Files {
				if f.Class == plan.Conflict {
					env.UI.Printf("%s\n", ui.Wrap("  "+q(f.Path)+" "+linesOf(f.Markers), ui.Columns80, "  "))
				}
			}
		}
	}
	for _, rp := range r.Repos {
		for _, l := range rp.Left {
			if l.Reason == plan.LeftConflict && l.Detail != nil {
				env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("Left as it is: %s (conflict: %s).", q(l.Path),
					quote.Text(*l.Detail)), ui.Columns80, "  "))
			}
		}
	}
	inexact(env, r, "revert")
}

// nothingReverted is the transcript of a revert's real call that wrote
// nothing and made no checkpoint (rollback.Run): said as the dry run at
// a terminal says it, never "Reverted · 0 files".
func nothingReverted(env *cli.Env, r *plan.Result) {
	dim := env.UI.OutStyle(color.Faint)
	other := false
	for _, rp := range r.Repos {
		for _, l := range rp.Left {
			other = other || l.Reason != plan.LeftAlready
		}
	}
	if !other {
		env.UI.Printf("Nothing to revert: every change it made is taken back already.\n")
		return
	}
	env.UI.Printf("Left as they are:\n")
	for _, rp := range r.Repos {
		for _, l := range rp.Left {
			why := "taken back already"
			if l.Reason != plan.LeftAlready {
				why = quote.Text(l.Reason)
				if l.Detail != nil {
					why += " " + quote.Text(*l.Detail)
				}
			}
			env.UI.Printf("  %s %s\n", quote.C(l.Path), dim("("+why+")"))
		}
	}
	env.UI.Printf("%s\n", ui.Wrap("Nothing to revert: every change it made is taken back already, "+
		"or left for the reason shown. Nothing was changed.", ui.Columns80, ""))
}

// argsOfPlan repeats the choices a real call must quote with the plan:
// a revert's as resolved (a pair named with last~<n> moves on), a
// rollback's as argsOf says.
func argsOfPlan(req rollback.Request, p *plan.Plan) string {
	if p.Revert == nil {
		return argsOf(req, p.Target.Checkpoint)
	}
	var b strings.Builder
	if req.Agent != "" {
		fmt.Fprintf(&b, "--agent=%s ", req.Agent)
	}
	fmt.Fprintf(&b, "--revert=%s ", quote.C(p.Revert.Name))
	if p.Revert.Conflicts == "markers" {
		b.WriteString("--conflicts=markers ")
	}
	return b.String()
}
