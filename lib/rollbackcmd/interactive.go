package rollbackcmd

import (
	"fmt"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/rollback"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// interactive runs the dry run, shows it, asks, and runs the real call
// quoting the plan shown. A conflict.outside_edits refusal offers keep (the
// default) or overwrite, and shows the new plan (docs/checkpoints.md#names, docs/rollback.md#the-plan).
// Ctrl-C or end of input at a prompt ends it at once, nothing changed.
func interactive(env *cli.Env, s *state.Store, req rollback.Request) error {
	in := cli.NewPrompter(env)
	gold := env.UI.OutStyle(color.FgYellow, color.Bold)
	req.DryRun, req.Plan = true, ""
	p, err := rollback.DryRun(env.Ctx, s, req)
	if e, ok := errcode.As(err); ok && e.Code == errcode.ConflictOutsideEdits {
		env.UI.Printf("%s\n", gold("These paths changed outside the agent's turns, or restoring them would\nreplace such a path:"))
		for _, r := range e.Data.(map[string]any)["repos"].([]errcode.RepoPaths) {
			for _, path := range r.Paths {
				env.UI.Printf("  %s\n", gold(quote.C(path)))
			}
		}
		env.UI.Printf("Keep them as they are, or overwrite them? [K/o] ")
		// The answer replaces whatever --outside said (refuse, to ask).
		for req.Outside = ""; req.Outside == ""; {
			ans, ok := in.Answer()
			switch {
			case !ok:
				return aborted(env)
			case ans == "" || ans == "k" || ans == "keep":
				req.Outside = "keep"
			case ans == "o" || ans == "overwrite":
				req.Outside = "overwrite"
			default:
				// As git add -p: an answer that is neither is asked again,
				// never taken for the default.
				env.UI.Printf("Answer k to keep them or o to overwrite them. [K/o] ")
			}
		}
		p, err = rollback.DryRun(env.Ctx, s, req)
	}
	if e, ok := errcode.As(err); ok && e.Code == errcode.ConflictRevertConflicts {
		data := e.Data.(map[string]any)
		env.UI.Printf("%s\n", gold(fmt.Sprintf("Reverting %s meets later changes in these paths:", quote.C(fmt.Sprint(data["revert"])))))
		// Each path with its lines and who changed them, in the words of
		// the refusal a command without a terminal gets.
		for _, c := range data["conflicts"].([]plan.RevertConflict) {
			info := plan.RevertInfo{Lines: c.Lines, By: c.By, Turns: c.Turns}
			if c.Detail != nil {
				info.Why = *c.Detail
			}
			env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("  %s (%s)", gold(quote.C(c.Path)), quote.Text(info.Describe())),
				ui.Columns80, "  "))
		}
		env.UI.Printf("Write git's conflict markers there and revert the rest, or stop? [m/N] ")
		markers, ok := in.Choose("m", "markers", "Answer m to write the markers or n to stop. [m/N] ")
		if !ok {
			return aborted(env)
		}
		if !markers {
			env.UI.Printf("Nothing was changed.\n")
			return nil
		}
		req.Conflicts = "markers"
		p, err = rollback.DryRun(env.Ctx, s, req)
	}
	if err != nil && env.Ctx.Err() != nil {
		return aborted(env) // Ctrl-C during a dry run, which writes nothing
	}
	if err != nil {
		return err
	}
	labelNotes(env, p, req)
	// The plan goes through the pager, which with LESS=FRX is no pager at
	// all when it fits the screen; its counts and the question come after,
	// on the terminal, where a person who quit the pager sees them.
	if p.Empty() && p.Revert != nil {
		return nothingToRevert(env, p)
	}
	if p.Empty() {
		// Nothing to write, move or rewind: no question, and no safety
		// and after checkpoints for nothing.
		env.UI.Printf("Nothing to roll back: the files, HEAD and the conversation are as %s has them.\n",
			quote.C(p.Target.Checkpoint))
		return nil
	}
	question := "Roll back?"
	if p.Revert != nil {
		unpage := env.UI.Page()
		revertScreen(env, p)
		unpage()
		question = "Revert?"
	} else {
		unpage := env.UI.Page()
		undoing(env, p, req)
		screen(env, p, req.Undo)
		unpage()
		summary(env, p, req.Undo)
	}
	env.UI.Printf("Plan %s. %s [y/N] ", quote.C(p.ID), question)
	yes, ok := in.Choose("y", "yes", "Answer y to go ahead or n to stop. [y/N] ")
	if !ok {
		return aborted(env)
	}
	if !yes {
		env.UI.Printf("Nothing was changed.\n")
		return nil
	}
	req.DryRun, req.Plan = false, p.ID
	res, err := run(env, s, req)
	if e, ok := errcode.As(err); ok && e.Code == errcode.ConflictRollbackStale {
		whatChanged(env, s, p, req)
	}
	if err != nil {
		return err
	}
	if res.Revert != nil {
		revertDone(env, s, res, req)
		return nil
	}
	done(env, s, res, req)
	return nil
}

// nothingToRevert ends a revert whose plan writes no file. Only when
// every change the turn made is taken back already is there nothing to
// revert; a path left for any other reason is shown with why, as the
// dry run shows it. A conflict no marker can show (a deletion, a binary
// file, a link) stays a conflict, as git revert's modify/delete does:
// nothing is written and the exit status is a conflict's, so that no one
// reads the turn as taken back.
func nothingToRevert(env *cli.Env, p *plan.Plan) error {
	conflicts, other := 0, 0
	for _, c := range p.Left() {
		switch c.Left {
		case plan.LeftAlready:
		case plan.LeftConflict:
			conflicts++
		default:
			other++
		}
	}
	if conflicts+other == 0 {
		env.UI.Printf("Nothing to revert: every change it made is taken back already.\n")
		return nil
	}
	unpage := env.UI.Page()
	revertScreen(env, p)
	unpage()
	if conflicts == 0 {
		env.UI.Printf("%s\n", ui.Wrap("Nothing to revert: every change it made is taken back already, "+
			"or left for the reason shown.", ui.Columns80, ""))
		return nil
	}
	gold := env.UI.OutStyle(color.FgYellow, color.Bold)
	env.UI.Printf("%s\n", gold(ui.Wrap("Not reverted: "+ui.Plural(conflicts, "file meets", "files meet")+
		" later changes that conflict markers cannot show, left as shown above. Nothing was changed.",
		ui.Columns80, "")))
	return cli.Silent{Code: errcode.ConflictRevertConflicts.Class().Exit()}
}

// aborted ends the dialogue on a fresh line: the terminal has echoed ^C,
// or nothing at all for Ctrl-D.
func aborted(env *cli.Env) error {
	env.UI.Printf("\nNothing was changed.\n")
	return cli.Silent{Code: cli.AbortCode}
}

// whatChanged says, when the tree moved under a plan a person was reading,
// what moved: the real call knows only that the digest differs (docs/rollback.md#the-plan),
// so a second dry run (which writes nothing) captures the tree again and
// the two captures are compared.
func whatChanged(env *cli.Env, s *state.Store, shown *plan.Plan, req rollback.Request) {
	req.DryRun, req.Plan = true, ""
	now, err := rollback.DryRun(env.Ctx, s, req)
	if err != nil {
		return // the error that follows says the plan is stale; no more is known
	}
	gold := env.UI.OutStyle(color.FgYellow, color.Bold)
	if shown.STree != now.STree {
		changed, err := plan.ChangedPaths(env.Ctx, s.Repo, shown.STree, now.STree)
		if err == nil && len(changed) > 0 {
			env.UI.Printf("%s\n", gold("Changed while the plan was shown:"))
			for _, p := range changed {
				env.UI.Printf("  %s\n", gold(quote.C(p)))
			}
		}
	}
	if a, b := shown.Snapshot.HeadString(), now.Snapshot.HeadString(); !sameString(a, b) {
		env.UI.Printf("%s %s → %s\n", gold("HEAD moved while the plan was shown:"), short(a), short(b))
	}
	env.UI.Printf("Nothing was changed. Run it again to see the new plan.\n")
}

func sameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
