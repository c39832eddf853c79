// Package rollbackcmd is git-venom-rollback: its grammar, its human output,
// and the interactive dry run → confirm → real call of a terminal (docs/checkpoints.md#names).
package rollbackcmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/harness"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/rollback"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// CLI is git-venom-rollback's grammar.
type CLI struct {
	cli.Globals
	Agent      string `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or this worktree's only agent), or a fetched copy, <remote>/<agent> or <remote>/<machine>/<agent> whose files to restore here."`
	Into       string `name:"into" complete:"agent" help:"With a fetched copy: the local agent that records the rollback, its safety checkpoint and log records (default: VENOM_AGENT, or the agent a rollback would infer)."`
	Checkpoint string `name:"checkpoint" complete:"checkpoint" help:"The checkpoint to go back to: k<n>, last, last~<n> (n back from last), t<n> (that turn's end) or a label; also given as the argument."`
	Undo       bool   `name:"undo" help:"Undo the agent's last rollback: go back to its safety checkpoint."`
	Revert     string `name:"revert" complete:"whole-turn" help:"Take back what a turn changed and keep every later change: t<n>, or what changed between two checkpoints, k<a>..k<b>. Files only."`
	Conflicts  string `name:"conflicts" enum:",refuse,markers" default:"" help:"With --revert, where a later change meets the turn's: refuse (the default), or markers (write git's conflict markers there)."`
	Restore    string `name:"restore" default:"" enum:",all,files" help:"all (the default without paths): files and conversation, or refuse; files: files only."`
	Outside    string `name:"outside" enum:",refuse,keep,overwrite" default:"" help:"Paths changed outside the agent's turns: refuse (default in a guarded tree), keep or overwrite (default elsewhere)."`
	KeepHead   bool   `name:"keep-head" help:"Restore the files and leave HEAD where it is."`
	DryRun     bool   `name:"dry-run" help:"Say what would change, and return the plan the real call must quote."`
	Plan       string `name:"plan" help:"The plan from the dry run."`
	// Materialize is for claude-code, whose interactive --resume ignores
	// --resume-session-at (tests/testdata/hooks/claude).
	Materialize bool     `name:"materialize" help:"claude-code: write the rewound session now, so that an interactive claude --resume opens it."`
	Path        []string `name:"path" sep:"none" complete:"path" help:"Roll back only this path or folder, as git's pathspecs: relative to the current folder, :/ for the top (repeatable; also after --). Files only; HEAD stays."`
	Args        []string `arg:"" optional:"" name:"checkpoint" usage:"[<checkpoint>]" complete:"checkpoint" help:"The checkpoint, as --checkpoint takes it; paths after --."`

	dashPaths []string
	// shownPaths are the paths read, for the commands hints print.
	shownPaths pathspec.Set
}

// TakePaths takes the paths after "--" (cli.PathTaker).
func (c *CLI) TakePaths(p []string) { c.dashPaths = p }

// pathspec reads --path and the paths after "--" as git reads pathspecs,
// relative to the current folder (lib/pathspec).
func (c *CLI) pathspec(env *cli.Env, top string) (pathspec.Set, error) {
	args := append(append([]string{}, c.Path...), c.dashPaths...)
	if len(args) == 0 {
		return pathspec.Set{}, nil
	}
	set, err := pathspec.Parse(top, env.Dir, args)
	var bad *pathspec.Error
	if errors.As(err, &bad) {
		return set, errcode.Newf(errcode.InvalidParamsPath, map[string]string{"path": bad.Arg},
			"%s is not a path inside the repository: %s", quote.C(bad.Arg), bad.Reason)
	}
	return set, err
}

// cwdIn is dir relative to top, "" at the top or outside it: the folder
// a rollback keeps (docs/rollback.md#the-current-folder). Both are
// resolved first, as git's top is.
func cwdIn(top, dir string) string {
	if t, err := filepath.EvalSymlinks(top); err == nil {
		top = t
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// New returns the grammar.
func New() *CLI {
	harness.Use() // the harnesses' rewinds and their records of a turn
	return &CLI{}
}

// Hints names the harnesses in an error's hints (cli.Hinter).
func (c *CLI) Hints(e *errcode.Error) { harness.Hints(e) }

// positional reads `git venom-rollback k1`: one checkpoint, given once.
func (c *CLI) positional() error {
	switch {
	case len(c.Args) == 0:
		return nil
	case len(c.Args) > 1:
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": c.Args},
			"unexpected argument %s: git venom-rollback takes one checkpoint", quote.C(c.Args[1])).
			Hint("git venom-rollback <checkpoint> --dry-run, then --plan=<id>")
	case c.Checkpoint != "":
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": c.Args},
			"the checkpoint is given twice (--checkpoint=%s and %s)", quote.C(c.Checkpoint), quote.C(c.Args[0])).
			Hint("give it once, as the argument or with --checkpoint")
	}
	c.Checkpoint = c.Args[0]
	return nil
}

// copyNamed reads a fetched copy named in the checkpoint (origin/a1/k3)
// or in --agent (origin/a1): the copy becomes the agent, and a
// VENOM_AGENT that filled --agent is then the local agent that records
// it, as with --agent=<copy>.
func (c *CLI) copyNamed(env *cli.Env, s *state.Store) error {
	if ok, err := c.localNamed(env, s); ok || err != nil {
		return err
	}
	id, name, ok, err := share.Qualified(env.Ctx, s, c.Checkpoint)
	if err != nil {
		return err
	}
	if !ok {
		c.Agent, err = share.Named(env.Ctx, s, c.Agent)
		return err
	}
	if !share.SameCopy(env.Ctx, s, c.Agent, env.Getenv("VENOM_AGENT"), id) {
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": []string{c.Checkpoint, "--agent=" + c.Agent}},
			"%s is a checkpoint of %s, not of --agent=%s", quote.C(c.Checkpoint), id, c.Agent).
			Hint("git venom-rollback %s --dry-run   (without --agent; --into names the local agent)", c.Checkpoint)
	}
	c.Agent, c.Checkpoint = id, name
	return nil
}

// localNamed reads a local agent named in the checkpoint (a1/k3), or in
// --revert (a1/t3, a1/k2..a1/k4, a1/k2..k4), as the output names
// checkpoints: the agent becomes --agent, which must agree. ok is false
// when no name holds an agent.
func (c *CLI) localNamed(env *cli.Env, s *state.Store) (ok bool, err error) {
	names := share.NewLocals(env.Ctx, s)
	agent, checkpoint, _, err := names.Pair(c.Checkpoint, "")
	if err != nil {
		return false, err
	}
	given := c.Checkpoint
	if agent != "" {
		c.Checkpoint = checkpoint
	} else if c.Revert != "" {
		from, to, pair := strings.Cut(c.Revert, "..")
		if agent, from, to, err = names.Pair(from, to); err != nil || agent == "" {
			return false, err
		}
		given = c.Revert
		if c.Revert = from; pair {
			c.Revert = from + ".." + to
		}
	}
	if agent == "" {
		return false, nil
	}
	if err := share.LocalAgrees(c.Agent, env.Getenv("VENOM_AGENT"), agent, given); err != nil {
		return false, err
	}
	c.Agent = agent
	return true, nil
}

func (c *CLI) request(env *cli.Env) rollback.Request {
	into := c.Into
	if into == "" && share.IsCopy(c.Agent) {
		into = env.Getenv("VENOM_AGENT")
	}
	return rollback.Request{
		Agent: c.Agent,
		Into:  into,
		Undo:  c.Undo,
		Options: plan.Options{Checkpoint: c.Checkpoint, Restore: c.Restore, Outside: c.Outside, KeepHead: c.KeepHead,
			Revert: c.Revert, Conflicts: c.Conflicts},
		DryRun: c.DryRun, Plan: c.Plan,
		Caller:      rollback.DetectCaller(env.Getenv, harness.IsShell),
		HookFiles:   hookFiles,
		Materialize: c.Materialize,
	}
}

// hookFiles are the files of the tree at top where `hook install` writes
// git-venom's hooks for any harness, by path.
func hookFiles(top string) map[string]plan.HookFile {
	out := map[string]plan.HookFile{}
	for _, f := range harness.HookFiles(top) {
		out[f.Path] = plan.HookFile{Harness: f.Harness, Ours: f.Ours}
	}
	return out
}

// Run runs the dry run, the real call, or on a terminal with neither flag
// the interactive flow. A refusal's hints that name flags to go on with
// (errcode.Retry) become the whole dry run to run, as typed but for them.
func (c *CLI) Run(env *cli.Env) (err error) {
	defer func() {
		if e, ok := errcode.As(err); ok {
			req := c.request(env)
			req.Paths = c.shownPaths
			e.Retries(func(flags []string) string { return retryCommand(req, flags) })
		}
	}()
	return c.run(env)
}

func (c *CLI) run(env *cli.Env) error {
	if err := c.positional(); err != nil {
		return err
	}
	s, err := env.Store()
	if err != nil {
		return err
	}
	if err := c.copyNamed(env, s); err != nil {
		return err
	}
	req := c.request(env)
	if req.Paths, err = c.pathspec(env, s.Repo.Top); err != nil {
		return err
	}
	c.shownPaths = req.Paths
	req.Cwd = cwdIn(s.Repo.Top, env.Dir)
	if !c.DryRun && c.Plan == "" {
		if err := rollback.NoTarget(&req); err != nil {
			return err
		}
		if !env.JSON && env.UI.InTTY && !env.UI.OutTTY {
			// A person at a terminal whose output goes down a pipe (| head,
			// | less) or into a file (> out.txt): the question could be
			// asked on the terminal, but the plan it confirms would go
			// there, cut or unseen. A rollback is confirmed only on the
			// plan shown.
			return errcode.Newf(errcode.InvalidParamsPlan, nil,
				"stdout is not a terminal: the plan cannot be shown").
				Hint("with stdout on the terminal it asks; or see the plan with").
				Hint("%s", retryCommand(req, nil)).
				Hint("then the command it prints after \"To run it:\"")
		}
		if env.JSON || !env.UI.InTTY || !env.UI.OutTTY {
			return errcode.Newf(errcode.InvalidParamsPlan, nil, "give exactly one of --dry-run and --plan").
				Hint("run with --dry-run first, then quote its plan with --plan=<id>")
		}
		return interactive(env, s, req)
	}
	if c.DryRun {
		p, err := rollback.DryRun(env.Ctx, s, req)
		if e, ok := errcode.As(err); ok && e.Code == errcode.ConflictOutsideEdits && !env.JSON {
			return refusedDryRun(env, s, req, e)
		}
		if err != nil {
			return err
		}
		if env.JSON {
			return p.Result().WriteJSON(env.UI.Out)
		}
		labelNotes(env, p, req)
		// A plan can run to thousands of paths: paged, as git pages a log.
		unpage := env.UI.Page()
		defer unpage()
		if p.Revert != nil {
			revertScreen(env, p)
		} else {
			undoing(env, p, req)
			screen(env, p, req.Undo)
			summary(env, p, req.Undo)
		}
		// The id twice on one line is past 80 columns: the command has
		// a line of its own, to copy whole.
		env.UI.Printf("Plan %s. To run it:\n  git venom-rollback %s--plan=%s%s\n", p.ID, argsOfPlan(req, p),
			p.ID, pathsOf(req))
		return nil
	}
	res, err := run(env, s, req)
	if e, ok := errcode.As(err); ok && e.Code == errcode.ConflictOutsideEdits && !env.JSON {
		return refusedPlan(req, e)
	}
	if err != nil {
		return err
	}
	if env.JSON {
		return res.WriteJSON(env.UI.Out)
	}
	if res.Revert != nil {
		revertDone(env, s, res, req)
		return nil
	}
	done(env, s, res, req)
	return nil
}

// labelNotes says on stderr which checkpoint a label named, where the
// agent gave it to more than one (checkpoints.LabelNote); the plan names
// the checkpoint it goes to.
func labelNotes(env *cli.Env, p *plan.Plan, req rollback.Request) {
	if p.Copy != nil {
		return
	}
	names := []string{req.Checkpoint}
	if req.Revert != "" {
		from, to, _ := strings.Cut(req.Revert, "..")
		names = []string{from, to}
	}
	for _, name := range names {
		if note := checkpoints.LabelNote(p.Agent, name); note != "" {
			fmt.Fprintf(env.UI.Err, "%s\n", ui.Wrap("note: "+note, ui.Columns80, "  "))
		}
	}
}

// refusedDryRun is a human dry run that outside edits refused: where the
// interactive call would ask, it shows the plan that keeps them (their
// paths marked, as every kept path is) and the whole commands that go on,
// to keep them or to overwrite them; it still fails with the refusal, as
// --json does, so that a script sees the same exit status.
func refusedDryRun(env *cli.Env, s *state.Store, req rollback.Request, refusal *errcode.Error) error {
	keep := req
	keep.Outside = "keep"
	p, err := rollback.DryRun(env.Ctx, s, keep)
	if err != nil || p.Revert != nil {
		return refusal
	}
	over := req
	over.Outside = "overwrite"
	unpage := env.UI.Page()
	undoing(env, p, keep)
	screen(env, p, keep.Undo)
	summary(env, p, keep.Undo)
	env.UI.Printf("Plan %s keeps them as they are. To run it:\n"+
		"  git venom-rollback %s--plan=%s%s\n", p.ID, argsOfPlan(keep, p), p.ID, pathsOf(keep))
	env.UI.Printf("To overwrite them instead (the safety checkpoint keeps them), see its plan:\n"+
		"  git venom-rollback %s--dry-run%s\n", argsOfPlan(over, p), pathsOf(over))
	unpage()
	// The paths stay in the hints; the --outside commands are above.
	refusal.DropRetries()
	return refusal.Hint("a dry run refuses them as --outside=refuse does; the commands above go on")
}

// refusedPlan is a real call that outside edits refused: its plan id
// holds the choice, so --outside added to the same line is a stale plan.
// The bare --outside hints give way to the dry runs that make a plan
// with each choice.
func refusedPlan(req rollback.Request, refusal *errcode.Error) error {
	if n := len(refusal.Hints); n >= 2 && strings.HasPrefix(refusal.Hints[n-2], "--outside=keep") {
		refusal.Hints = refusal.Hints[:n-2]
	}
	keep, over := req, req
	keep.Outside, over.Outside = "keep", "overwrite"
	return refusal.Hint("to keep them as they are, see the plan that does, then quote it:").
		Hint("  git venom-rollback %s--dry-run%s", argsOf(keep, req.Checkpoint), pathsOf(keep)).
		Hint("to overwrite them (the safety checkpoint keeps them):").
		Hint("  git venom-rollback %s--dry-run%s", argsOf(over, req.Checkpoint), pathsOf(over))
}

// run is the real call, with a progress line on a terminal's stderr when
// it takes over about a second (a big tree's capture and files): the
// files with counts, as git's "Updating files", and the way back after an
// interrupt the same (docs/rollback.md#interrupts).
func run(env *cli.Env, s *state.Store, req rollback.Request) (*plan.Result, error) {
	msg := "Rolling back…"
	if req.Undo {
		msg = "Undoing the last rollback…"
	} else if req.Revert != "" {
		msg = "Reverting " + quote.C(req.Revert) + "…"
	} else if req.Checkpoint != "" {
		msg = "Rolling back to " + quote.C(req.Checkpoint) + "…"
	}
	prog := &rollback.Progress{}
	req.Progress = prog
	progress := env.UI.ProgressOf(func(elapsed time.Duration) string { return progressLine(prog, msg, elapsed) })
	defer progress.Stop()
	prog.Told = func(sig string) {
		progress.Say(fmt.Sprintf("%s: ignored while the rollback is undone; stopping now would leave the tree half-way",
			sig))
	}
	return rollback.Run(env.Ctx, s, req)
}

// progressLine is the real call's progress: the files as a share and
// counts once they are being written, the way back's counts after an
// interrupt or a failure, the seconds before.
func progressLine(p *rollback.Progress, msg string, elapsed time.Duration) string {
	done, total := p.Counts()
	switch {
	case p.Back.Load():
		why := "failed"
		if w := p.Why(); w != "failed" {
			why = "interrupted"
		}
		if total == 0 {
			return why + "; undoing…" // the way back's capture: its count comes next
		}
		return fmt.Sprintf("%s; undoing… %d/%d", why, done, total)
	case p.Files.Load() && total > 0:
		return fmt.Sprintf("%s %d%% (%d/%d)", rollingBack(msg), done*100/total, done, total)
	}
	return fmt.Sprintf("%s %.0fs", msg, elapsed.Seconds())
}

// rollingBack is the counts' label: "Rolling back:" as git's "Updating
// files:".
func rollingBack(msg string) string {
	if strings.HasPrefix(msg, "Undoing") {
		return "Undoing:"
	}
	if strings.HasPrefix(msg, "Reverting") {
		return "Reverting:"
	}
	return "Rolling back:"
}
