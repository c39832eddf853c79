package rollbackcmd

import (
	"fmt"
	"strings"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/rollback"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// screen shows a dry run as docs/rollback.md#the-plan's confirmation screen: outside paths
// first, highlighted; then the files by class; then what is left; then what
// happens to HEAD and the conversation; then the counts. Paths, ids, turns,
// branch names and commit subjects come from trees, refs and the log: each
// is quoted (quote.C, quote.Text).
func screen(env *cli.Env, p *plan.Plan, undo bool) {
	q := quote.C
	bold := env.UI.OutStyle(color.Bold)
	gold := env.UI.OutStyle(color.FgYellow, color.Bold)
	dim := env.UI.OutStyle(color.Faint)
	if p.Copy != nil {
		// The copy's turns are another machine's: its through_turn means
		// nothing here.
		env.UI.Printf("Restore the files of %s of the fetched copy %s here, recorded under %s.\n",
			bold(q(p.Target.Checkpoint)), bold(q(p.Copy.ID)), q(p.Agent.ID))
		env.UI.Printf("Files only: HEAD, the branch, the index and the conversation stay as they are.\n")
	} else if p.Target.Reason == agents.ToolCallReason {
		env.UI.Printf("Roll %s back to just before tool call %s: its files only.\n", q(p.Agent.ID),
			bold(q(p.Target.Checkpoint)))
	} else if p.Own {
		env.UI.Printf("Roll %s back to %s, as you saved it.\n", q(p.Agent.ID), bold(q(p.Target.Checkpoint)))
	} else {
		env.UI.Printf("Roll %s back to %s, %s.\n", q(p.Agent.ID), bold(q(p.Target.Checkpoint)),
			stateAt(p.Target.ThroughTurn))
	}
	worktree(env, p.Agent.Tree)
	if p.Guarded && p.Copy == nil {
		// The words of a revert's "Files only:" line: one wording for
		// what stays, and the reason in plain words (a guarded tree is
		// one the agent shares, with a person or another agent).
		env.UI.Printf("HEAD, the branch and the index stay as they are: the tree is shared.\n")
	}
	if !p.Paths.Empty() {
		env.UI.Printf("%s\n", ui.Wrap("Only "+bold(quote.Join(p.Paths.Shown(), ", "))+
			": every other file, HEAD and the index stay as they are.", ui.Columns80, "  "))
	}
	files := p.Files()
	outside := outsidePaths(p)
	if len(outside) > 0 {
		env.UI.Printf("%s\n", gold("Changed outside the agent's turns:"))
		for _, c := range outside {
			fate := ""
			if f := outsideFate(c); f != "" {
				fate = " " + dim("("+f+")")
			}
			env.UI.Printf("%s\n", pathRow(gold(fmt.Sprintf("%-6s", c.Change)), gold(q(c.Path)), fate))
		}
	}
	// The classes tell the agent's edits from its turns'. An undo puts
	// back what the rollback overwrote, whoever had written it, and a
	// person's own checkpoints have only their edits: one list each.
	groups := []struct{ title, classes string }{
		{"Changed by the agent's edits:", plan.Agent},
		{"Changed during the agent's turns:", plan.Turn},
	}
	switch {
	case undo:
		groups = groups[:1]
		groups[0].title, groups[0].classes = "Put back as they were before the rollback:", plan.Agent+plan.Turn
	case p.Own:
		groups = groups[:1]
		groups[0].title, groups[0].classes = "Your edits since "+q(p.Target.Checkpoint)+":", plan.Agent+plan.Turn
	}
	for _, g := range groups {
		var list []plan.Change
		for _, c := range files {
			if c.Class != plan.Outside && strings.Contains(g.classes, c.Class) {
				list = append(list, c)
			}
		}
		if len(list) == 0 {
			continue
		}
		env.UI.Printf("%s\n", g.title)
		for _, c := range list {
			env.UI.Printf("%s\n", pathRow(fmt.Sprintf("%-6s", c.Change), q(c.Path), ""))
		}
	}
	if len(files) == 0 {
		env.UI.Printf("No file changes.\n")
	}
	var left []plan.Change
	for _, c := range p.Left() {
		// Outside paths kept are listed above; a path they block (the
		// other side of a file<->folder swap) is not, so it is here.
		if c.Left != plan.LeftOutside || c.Class != plan.Outside {
			left = append(left, c)
		}
	}
	if len(left) > 0 {
		env.UI.Printf("Left as they are:\n")
		for _, c := range left {
			d := ""
			if c.Detail != nil {
				d = " " + quote.Text(*c.Detail)
			}
			if c.Left == plan.LeftHookSettings && c.Detail != nil {
				// One line says why: the hooks hook install wrote stay.
				env.UI.Printf("%s\n", pathRow("", q(c.Path), " "+dim("("+quote.Text(*c.Detail)+", kept: hook install wrote them)")))
				continue
			}
			// The reason can come from the log (a capture's skipped[].reason),
			// which another party can shape: quoted as every stored string.
			env.UI.Printf("%s\n", pathRow("", q(c.Path), " "+dim("("+quote.Text(c.Left)+d+")")))
		}
	}
	for _, p := range p.IgnoredEdits {
		env.UI.Printf("%s\n", pathRow("", q(p), " "+dim("(ignored, edited by the agent: cannot be restored)")))
	}
	h := p.Head
	switch {
	case h.Moves:
		br := "HEAD (detached)"
		if h.Branch != "" {
			br = q(h.Branch)
		}
		if h.Forward {
			env.UI.Printf("HEAD: %s moves forward from %s to %s, bringing back %s; the index follows.\n",
				br, short(h.From), short(h.To), commits(h.Commits))
		} else {
			env.UI.Printf("HEAD: %s moves back from %s to %s, dropping %s; the index follows.\n",
				br, short(h.From), short(h.To), commits(h.Commits))
		}
		for _, c := range h.Passed {
			env.UI.Printf("  %s\n", quote.Text(c))
		}
		if more := h.Commits - len(h.Passed); more > 0 {
			env.UI.Printf("  %s\n", dim(fmt.Sprintf("and %s more", commits(more))))
		}
	case h.From == nil && h.Branch != "":
		// An unborn branch: there is no commit for HEAD to stay at.
		env.UI.Printf("HEAD: stays on %s, which has no commits yet.\n", q(h.Branch))
	case h.From == nil:
		env.UI.Printf("HEAD: stays where it is, with no commits yet.\n")
	default:
		env.UI.Printf("HEAD: stays at %s.\n", short(h.From))
	}
	cv := p.Conversation
	switch {
	case cv.None:
	case p.Restore == "files":
		env.UI.Printf("Conversation: stays as it is; the agent gets the rollback note.\n")
	case cv.Rewinds:
		env.UI.Printf("Conversation: goes back to %s; drops %s.\n", stateAt(cv.ThroughTurn), quote.Join(cv.Drops, ", "))
	default:
		env.UI.Printf("Conversation: already matches.\n")
	}
	if len(p.SharedWith) > 0 {
		env.UI.Printf("%s\n", ui.Wrap("Shared with "+quote.Join(p.SharedWith, ", ")+": they get the rollback note.", ui.Columns80, "  "))
	}
}

// pathRow is a plan's row: "  modify a/b.txt (kept)" (head, path,
// tail), or where that passes 80 columns the path on a line of its own
// below the rest, whole, as a plan must name it:
//
//	modify (kept)
//	  services/payments/internal/…/webhook_signature_test.go
func pathRow(head, path, tail string) string {
	row := "  " + strings.TrimPrefix(head+" "+path, " ") + tail
	if ui.Width(row) <= ui.Columns80 {
		return row
	}
	if head == "" {
		return "  " + path + "\n    " + strings.TrimPrefix(tail, " ")
	}
	return "  " + strings.TrimRight(head, " ") + tail + "\n    " + path
}

// summary counts the plan by class, for a person who cannot read every
// line of a long one, with what its writes come to: "Restores 2,790 files
// (writes 18.20 MiB): 2 changed outside the agent's turns, 2,700 by its
// edits, 88 during its turns; 3 left as they are."
func summary(env *cli.Env, p *plan.Plan, undo bool) {
	n := map[string]int{}
	files := p.Files()
	for _, c := range files {
		n[c.Class]++
	}
	var parts []string
	for _, k := range []struct{ class, what string }{
		{plan.Outside, "changed outside the agent's turns"},
		{plan.Agent, "by its edits"},
		{plan.Turn, "during its turns"},
	} {
		if n[k.class] > 0 && !p.Own && !(undo && k.class != plan.Outside) {
			parts = append(parts, ui.Thousands(n[k.class])+" "+k.what)
		}
	}
	line := "Restores " + ui.Plural(len(files), "file", "files")
	if len(files) > 0 {
		line += " (writes " + ui.Bytes(p.Bytes) + ")"
	}
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	if l := len(p.Left()); l > 0 {
		line += "; " + ui.Thousands(l) + " left as " + map[bool]string{true: "it is", false: "they are"}[l == 1]
	}
	env.UI.Printf("%s.\n", line)
	keptLine(env, p.Kept)
}

// keptLine says that the current folder, which the rollback empties, is
// kept (docs/rollback.md#the-current-folder).
func keptLine(env *cli.Env, kept string) {
	if kept != "" {
		env.UI.Printf("Your current folder %s stays, empty: git tracks no folders.\n", quote.C(kept))
	}
}

// outsidePaths are the outside paths the plan restores or keeps.
func outsidePaths(p *plan.Plan) []plan.Change {
	var out []plan.Change
	for _, c := range p.Changes {
		if c.Class == plan.Outside && (c.Left == "" || c.Left == plan.LeftOutside) {
			out = append(out, c)
		}
	}
	return out
}

// outsideFate says what happens to an outside path where its change does
// not: kept, restored, or overwritten; a file the rollback deletes is just
// "delete", never "(overwritten)".
func outsideFate(c plan.Change) string {
	switch {
	case c.Left != "":
		return "kept"
	case c.Change == "create":
		return "restored"
	case c.Change == "delete":
		return ""
	}
	return "overwritten"
}

// stateAt is the checkpoint's point in the conversation, for a person:
// "after turn t3", or "before the first turn" (the rollback note's "before
// your first turn" is addressed to the agent).
func stateAt(through *string) string {
	if through == nil {
		return "before the first turn"
	}
	return "after turn " + quote.C(*through)
}

func commits(n int) string { return ui.Plural(n, "commit", "commits") }

// undoing says which rollback an --undo plan takes back, before the plan;
// of one that did not end (killed, or its way back failed), that it may
// have written part of its files and the undo puts back the files as
// they were before it, as git rebase --abort does.
func undoing(env *cli.Env, p *plan.Plan, req rollback.Request) {
	last, ended := p.Agent.LastRollback, ""
	if o := p.Agent.OpenRollback; o != nil {
		// Died and not settled yet: the real call settles it first.
		last = &agents.Rollback{Checkpoint: o.Checkpoint, Safety: o.Safety, Copy: o.Copy, Revert: o.Revert,
			Ended: string(errcode.FailedRollbackInterrupted)}
	}
	if !req.Undo || last == nil {
		return
	}
	what := "the rollback of " + quote.C(p.Agent.ID) + " to " + quote.C(last.Checkpoint)
	if cp := last.Copy; cp != "" {
		what += " of the fetched copy " + quote.C(cp)
	}
	if last.Revert != "" {
		what = "the revert of " + quote.C(last.Revert) + " of " + quote.C(p.Agent.ID)
	}
	switch last.Ended {
	case string(errcode.FailedRollbackInterrupted):
		ended = "its process died"
	case string(errcode.FailedRollbackPartial):
		ended = "its way back failed"
	}
	if ended == "" {
		env.UI.Printf("Undo %s: back to its safety checkpoint.\n", what)
		return
	}
	env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("Undo %s, which did not end (%s, %s): back to its safety checkpoint %s, "+
		"every file as it was before that rollback.", what, last.Ended, ended, quote.C(last.Safety)), ui.Columns80, ""))
}

// worktree names the tree a plan writes, or a rollback wrote: the
// worktree the command runs in, the agent's (docs/checkpoints.md#worktrees),
// its path alone on a line to fit 80 columns and copy whole.
func worktree(env *cli.Env, tree string) {
	env.UI.Printf("Worktree:\n  %s\n", quote.C(tree))
}

// done is docs/rollback.md#the-plan's transcript row, with the command that undoes it:
// ↺ Rolled back to k2 (after t1) · 1 file · conversation too · safety k4
//
//	undo: git venom-rollback --undo
//
// An agent with no harness has no conversation to mention.
func done(env *cli.Env, s *state.Store, r *plan.Result, req rollback.Request) {
	q, tree := quote.C, s.Repo.Top
	when := "before the first turn"
	if r.Conversation.ThroughTurn != nil {
		when = "after " + q(*r.Conversation.ThroughTurn)
	}
	n := 0
	for _, rp := range r.Repos {
		n += len(rp.Files)
	}
	conv := ""
	switch {
	case r.Conversation.None:
	case r.Restore == "files":
		conv = " · files only"
	default:
		conv = " · conversation too"
	}
	target := q(r.Checkpoint)
	if r.Copy != "" {
		target += " of " + q(r.Copy)
		when = "recorded under " + q(r.Agent)
	}
	scope := ""
	if len(r.Paths) > 0 {
		scope = " " + quote.Join(r.Paths, ", ")
	}
	line := fmt.Sprintf("↺ Rolled back%s to %s (%s) · %s%s · safety %s", scope, target, when,
		plan.Count(n), conv, q(*r.Safety))
	// Even the shortest, with its undo, is past 80 columns: the undo has
	// a line of its own, to copy whole.
	worktree(env, tree)
	env.UI.Printf("%s\n  undo: %s\n", line, undoCommand(s, r, req))
	if r.Kept != nil {
		keptLine(env, *r.Kept)
	}
	inexact(env, r, "rollback")
	// The rewound conversation is a new session: without this line it
	// could be found only in --json.
	if len(r.Conversation.Resume) > 0 {
		env.UI.Printf("Resume the rewound conversation: %s\n", quote.Shell(r.Conversation.Resume))
	}
}

// undoCommand is the command printed to undo r: the local agent's for a
// copy's files, which came to it. It runs as printed: files only where
// the safety checkpoint cannot bring the conversation back (a rewound
// conversation goes on in a new session, and the one it left cannot be
// rewound to), as the undo's own preflight decides.
func undoCommand(s *state.Store, r *plan.Result, req rollback.Request) string {
	undo := "git venom-rollback --undo"
	if req.Copy() {
		undo += " --agent=" + quote.C(r.Agent)
	} else if req.Agent != "" {
		undo += " --agent=" + quote.C(req.Agent)
	}
	if rollback.UndoFilesOnly(s, r.Agent) {
		undo += " --restore=files"
	}
	return undo
}

// inexact says, when something wrote to the tree while verb ran, where
// the tree is as it came out.
func inexact(env *cli.Env, r *plan.Result, verb string) {
	if r.Exact != nil && !*r.Exact {
		env.UI.Printf("Something wrote to the tree during the %s: %s shows it as it came out.\n", verb, quote.C(*r.After))
	}
}

func short(s *string) string {
	if s == nil {
		return "no commit"
	}
	if len(*s) > 12 {
		return quote.C((*s)[:12])
	}
	return quote.C(*s)
}

// argsOf repeats the choices a real call must quote with the plan; the
// checkpoint as the dry run resolved it (a shorthand's meaning moves on).
func argsOf(req rollback.Request, checkpoint string) string {
	var b strings.Builder
	if req.Agent != "" {
		fmt.Fprintf(&b, "--agent=%s ", req.Agent)
	}
	if req.Into != "" {
		fmt.Fprintf(&b, "--into=%s ", req.Into)
	}
	if req.Undo {
		b.WriteString("--undo ")
	} else {
		fmt.Fprintf(&b, "%s ", quote.C(checkpoint))
	}
	if req.Restore != "" && req.Restore != "all" && !req.Copy() {
		fmt.Fprintf(&b, "--restore=%s ", req.Restore)
	}
	if req.Outside != "" {
		fmt.Fprintf(&b, "--outside=%s ", req.Outside)
	}
	if req.KeepHead && req.Paths.Empty() && !req.Copy() {
		b.WriteString("--keep-head ")
	}
	return b.String()
}

// pathsOf repeats a path-scoped plan's paths, as they mean the same from
// any folder, after the --plan the real call quotes.
func pathsOf(req rollback.Request) string {
	if req.Paths.Empty() {
		return ""
	}
	return " -- " + quote.Shell(req.Paths.Args())
}

// retryCommand is the dry run of req with flags set (errcode.Retry:
// --name=value, --name= to leave a flag out, --name=false for a boolean),
// written whole as a person types it, to run as printed.
func retryCommand(req rollback.Request, flags []string) string {
	for _, f := range flags {
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		switch name {
		case "outside":
			req.Outside = value
		case "restore":
			req.Restore = value
		case "conflicts":
			req.Conflicts = value
		case "revert":
			req.Revert = value
		case "checkpoint":
			req.Checkpoint = value
		case "keep-head":
			req.KeepHead = value != "false"
		case "undo":
			req.Undo = value != "false"
		}
	}
	argv := []string{"git", "venom-rollback"}
	if req.Agent != "" {
		argv = append(argv, "--agent="+req.Agent)
	}
	if req.Into != "" {
		argv = append(argv, "--into="+req.Into)
	}
	if req.Undo {
		argv = append(argv, "--undo")
	}
	if req.Revert != "" {
		argv = append(argv, "--revert="+req.Revert)
	}
	if req.Checkpoint != "" {
		argv = append(argv, req.Checkpoint)
	}
	for _, f := range [][2]string{{"restore", req.Restore}, {"outside", req.Outside}, {"conflicts", req.Conflicts}} {
		if f[1] != "" {
			argv = append(argv, "--"+f[0]+"="+f[1])
		}
	}
	if req.KeepHead {
		argv = append(argv, "--keep-head")
	}
	argv = append(argv, "--dry-run")
	if !req.Paths.Empty() {
		argv = append(append(argv, "--"), req.Paths.Args()...)
	}
	return quote.Shell(argv)
}
