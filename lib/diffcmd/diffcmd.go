// Package diffcmd is the grammar of git-venom-diff and its glue to
// lib/treediff (docs/json.md agent.checkpoint_diff).
package diffcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/packset"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treediff"
	"github.com/git-venom/git-venom/lib/ui"
)

// CLI is git-venom-diff's grammar.
type CLI struct {
	cli.Globals
	Agent     string   `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or this worktree's only agent), or a fetched copy, <remote>/<agent> or <remote>/<machine>/<agent>."`
	From      string   `name:"from" complete:"checkpoint" help:"The checkpoint to compare from: k<n>, last, last~<n> (n back from last), t<n> (that turn's end) or a label."`
	To        string   `name:"to" complete:"checkpoint" help:"The checkpoint to compare to, named as --from; the current files when left out."`
	Repo      string   `name:"repo" default:"." help:"The repository of the agent's scope (always .)."`
	Path      []string `name:"path" sep:"none" complete:"path" help:"Only this path or folder, as git's pathspecs: relative to the current folder, :/ for the top, b64:<base64> for any bytes (repeatable; also after --)."`
	Stat      bool     `name:"stat" help:"Show only the stat, as git diff --stat."`
	NameOnly  bool     `name:"name-only" help:"Show only the names of the files that changed, as git diff --name-only."`
	Blame     string   `name:"blame" placeholder:"<path>" complete:"path" help:"Show the file as it is now, each line with the agent turn that last wrote it, or the commit it came from, or the person."`
	LineRange string   `name:"lines" short:"L" placeholder:"<start>,<end>" help:"With --blame: only these lines, as git blame -L (<start>,<end> or <start>,+<count>)."`
	Args      []string `arg:"" optional:"" name:"checkpoint" usage:"[<from> [<to>]]" complete:"checkpoint" complete-max:"2" help:"Short forms: <from> [<to>] [-- <path>...]."`

	dashPaths []string
}

// TakePaths takes the paths after "--" (cli.PathTaker).
func (c *CLI) TakePaths(p []string) { c.dashPaths = p }

// New returns the grammar.
func New() *CLI { return &CLI{} }

// Result is agent.checkpoint_diff's result: {files, patch?}.
type Result struct {
	Files []treediff.File `json:"files"`
	Patch *treediff.Patch `json:"patch,omitempty"`
}

// Run diffs.
func (c *CLI) Run(env *cli.Env) error {
	if c.Blame != "" {
		return c.blame(env)
	}
	if c.LineRange != "" {
		return errcode.Newf(errcode.InvalidParamsUsage, nil, "-L goes with --blame").
			Hint("git venom-diff --blame <path> -L <start>,<end>")
	}
	if err := c.shortForms(); err != nil {
		return err
	}
	s, st, err := env.Read()
	if err != nil {
		return err
	}
	if err := c.copyNamed(env, s); err != nil {
		return err
	}
	var a *agents.Agent
	if share.IsCopy(c.Agent) {
		// A fetched copy (push, fetch): to this worktree by default.
		_, a, err = share.ReadCopy(env.Ctx, s, c.Agent)
	} else {
		a, err = st.Named(c.Agent)
	}
	if err != nil {
		return err
	}
	if c.Repo != "." {
		return errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": c.From, "repo": c.Repo},
			"agent %s's scope has one repository, named .", a.ID)
	}
	spec, err := c.pathspec(env, s.Repo)
	if err != nil {
		return err
	}
	for _, name := range []string{c.From, c.To} {
		if note := checkpoints.LabelNote(a, name); note != "" && !env.JSON {
			fmt.Fprintf(env.UI.Err, "%s\n", ui.Wrap("note: "+note, ui.Columns80, "  "))
		}
	}
	if c.From, err = checkpoints.Resolve(a, c.From); err != nil {
		return err
	}
	if c.To != "" {
		if c.To, err = checkpoints.Resolve(a, c.To); err != nil {
			return err
		}
	}
	from, err := checkpoints.Find(s.Repo, a, c.From)
	if err != nil {
		return err
	}
	if err := checkCopy(s, a, from); err != nil {
		return err
	}
	d := treediff.Diff{Git: s.Repo.Git, Repo: ".", From: from.Repos[0].Commit, Paths: spec.Git()}
	if c.To != "" {
		to, err := checkpoints.Find(s.Repo, a, c.To)
		if err != nil {
			return err
		}
		if err := checkCopy(s, a, to); err != nil {
			return err
		}
		d.To = to.Repos[0].Commit
	} else {
		// The capture's packs stay held until the diff is read.
		defer packset.Release()
		if d.To, err = currentTree(env.Ctx, s, a); err != nil {
			return err
		}
		if err := testhook.PointIn(env.Ctx, "diff-captured"); err != nil {
			return err
		}
	}
	var left []string
	if c.To == "" {
		if d, left, err = leaveExcluded(env.Ctx, d, s.Config.Exclude); err != nil {
			return gitFailed(err)
		}
	}
	if env.JSON {
		return c.printJSON(env, s, d)
	}
	if err := c.printHuman(env, s, d); err != nil {
		return err
	}
	if len(left) > 0 {
		env.UI.Errorf("Not shown, as venom.exclude keeps them out and a rollback leaves them:\n")
		for i, p := range left {
			if i == 5 && len(left) > 6 {
				env.UI.Errorf("  … and %d more\n", len(left)-i)
				break
			}
			env.UI.Errorf("  %s\n", p)
		}
	}
	return nil
}

// leaveExcluded leaves out of a diff against the current files the paths
// venom.exclude matches: a capture holds none of them (or the index's
// version), so they would show as deleted, while a rollback leaves them
// as they are (docs/rollback.md). left names what was left out, each the
// shallowest excluded folder or the file.
func leaveExcluded(ctx context.Context, d treediff.Diff, patterns []string) (treediff.Diff, []string, error) {
	x := ignore.NewExcluder(patterns)
	if x == nil {
		return d, nil, nil
	}
	files, err := d.Files(ctx)
	if err != nil {
		return d, nil, err
	}
	var left []string
	seen := map[string]bool{}
	for _, f := range files {
		at, ok := x.Excluded(f.Raw(), false)
		if !ok || seen[at] {
			continue
		}
		seen[at] = true
		left = append(left, at)
	}
	if len(left) == 0 {
		return d, nil, nil
	}
	shown := make([]string, len(left))
	for i, at := range left {
		d.Leave = append(d.Leave, strings.TrimSuffix(at, "/"))
		shown[i], _ = quote.JSONPath(at)
	}
	return d, shown, nil
}

// checkCopy checks a fetched copy's checkpoint again, its paths and its
// budgets (share.Check) before git expands its tree: a tree bomb of a
// million paths took git diff 20 s and 700 MB, a tree 30,000 folders
// deep crashed it.
func checkCopy(s *state.Store, a *agents.Agent, c *agents.Checkpoint) error {
	if !share.IsCopy(a.ID) {
		return nil
	}
	return share.Check(s, a, c, share.CheckPaths)
}

// shortForms reads `git venom-diff k2 [k3]`.
func (c *CLI) shortForms() error {
	if len(c.Args) > 2 {
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": c.Args},
			"at most two checkpoints: git venom-diff <from> [<to>]")
	}
	if len(c.Args) > 0 {
		if c.From != "" || (len(c.Args) == 2 && c.To != "") {
			return errcode.Newf(errcode.InvalidParamsUsage, nil, "give the checkpoints as flags or as arguments, not both")
		}
		c.From = c.Args[0]
		if len(c.Args) == 2 {
			c.To = c.Args[1]
		}
	}
	if c.From == "" {
		return errcode.Newf(errcode.InvalidParamsCheckpoint, nil, "which checkpoint? git venom-diff <from> [<to>], or --from").
			Shorter("which checkpoint? git venom-diff <from> [<to>]").
			Hint("%s", ids.FormsHint).
			Hint("git venom-checkpoint list shows them")
	}
	return nil
}

// copyNamed reads a fetched copy named in a checkpoint (origin/a1/k3) or
// in --agent (origin/a1). Both checkpoints are the one copy's: a diff is
// of one agent's checkpoints, and a bare <to> after a copy's <from> is
// the copy's too.
func (c *CLI) copyNamed(env *cli.Env, s *state.Store) error {
	// A local agent's (a1/k3), as the output names checkpoints.
	from, to := c.From, c.To
	agent, f, t, err := share.NewLocals(env.Ctx, s).Pair(c.From, c.To)
	if err != nil {
		return err
	}
	if agent != "" {
		given := from
		if f == from { // the agent was in <to> alone
			given = to
		}
		if err := share.LocalAgrees(c.Agent, env.Getenv("VENOM_AGENT"), agent, given); err != nil {
			return err
		}
		c.Agent, c.From, c.To = agent, f, t
		return nil
	}
	copyID := ""
	for _, name := range []*string{&c.From, &c.To} {
		id, cp, ok, err := share.Qualified(env.Ctx, s, *name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if copyID != "" && id != copyID {
			return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": []string{c.From, c.To}},
				"%s and %s are two agents' checkpoints: a diff is of one agent's", quote.C(c.From), quote.C(c.To))
		}
		copyID, *name = id, cp
	}
	if copyID == "" {
		var err error
		c.Agent, err = share.Named(env.Ctx, s, c.Agent)
		return err
	}
	if !share.SameCopy(env.Ctx, s, c.Agent, env.Getenv("VENOM_AGENT"), copyID) {
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]any{"args": []string{"--agent=" + c.Agent}},
			"the checkpoints are %s's, not --agent=%s's", copyID, c.Agent)
	}
	c.Agent = copyID
	return nil
}

// pathspec reads --path and the paths after "--" as git reads pathspecs:
// relative to the current folder (lib/pathspec). A path outside the
// repository, or one git would refuse, is invalid_params.path.
func (c *CLI) pathspec(env *cli.Env, r *repo.Repo) (pathspec.Set, error) {
	if c.Stat && c.NameOnly {
		return pathspec.Set{}, errcode.Newf(errcode.InvalidParamsUsage, nil, "--stat and --name-only do not go together")
	}
	set, err := pathspec.Parse(r.Top, env.Dir, append(append([]string{}, c.Path...), c.dashPaths...))
	var bad *pathspec.Error
	if errors.As(err, &bad) {
		return set, errcode.Newf(errcode.InvalidParamsPath, map[string]string{"path": bad.Arg},
			"%s is not a path inside the repository: %s", quote.C(bad.Arg), bad.Reason)
	}
	return set, err
}

// currentTree captures the agent's tree without a ref or a log record, as a
// dry run does (docs/rollback.md#the-plan): under the lock, since the temporary index lives in
// the state directory.
func currentTree(ctx context.Context, s *state.Store, a *agents.Agent) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Config.Timeout)
	defer cancel()
	tx, err := s.Begin(ctx, lock.Holder{Op: "diff", Agent: a.ID}, errcode.TimeoutLock)
	if err != nil {
		return "", err
	}
	tx.KeepPacks()
	defer tx.End()
	tree, err := checkpoints.TreeOf(ctx, s, a)
	if err != nil {
		return "", err
	}
	if tree != s.Repo {
		defer tree.Free()
	}
	// Its objects no ref reaches (an earlier capture's, found stored) are
	// written again into a pack this command holds until its end
	// (docs/checkpoints.md#objects-a-command-relies-on): a person's gc
	// --prune=now before the diff reads them deletes nothing it shows.
	for try := 1; ; try++ {
		snap, err := capture.Take(ctx, tree, s.TmpDir(), capture.LimitsOf(s.Config))
		if err != nil {
			return "", err
		}
		err = snap.Keep(tree, currentAnchors(tree, a, snap))
		if err == nil {
			return snap.Tree.String(), nil
		}
		if !capture.Gone(err) || try == 3 {
			return "", err
		}
	}
}

// currentAnchors are the commits a ref keeps whose trees the current one
// shares most with: HEAD's and the agent's latest checkpoint's.
func currentAnchors(r *repo.Repo, a *agents.Agent, snap *capture.Snapshot) []*git.Oid {
	list := []*git.Oid{snap.Head}
	if k := a.Latest(); k != nil && len(k.Repos) == 1 && checkpoints.Usable(r, a, k) {
		if id, err := git.NewOid(k.Repos[0].Commit); err == nil {
			list = append(list, id)
		}
	}
	return list
}

func (c *CLI) printJSON(env *cli.Env, s *state.Store, d treediff.Diff) error {
	files, err := d.Files(env.Ctx)
	if err != nil {
		return gitFailed(err)
	}
	res := Result{Files: files}
	if len(d.Paths) > 0 {
		if res.Patch, err = d.Patch(env.Ctx, s.Config.DiffMaxBytes); err != nil {
			return gitFailed(err)
		}
	}
	return env.UI.JSON(res)
}

// printHuman shows git diff --stat --summary -p's text, through the pager on a
// terminal.
func (c *CLI) printHuman(env *cli.Env, s *state.Store, d treediff.Diff) error {
	files, err := d.Files(env.Ctx)
	if err != nil {
		return gitFailed(err)
	}
	to := c.To
	if to == "" {
		to = "the current files"
	}
	if len(files) == 0 {
		return c.noChanges(env, d, to)
	}
	mode := treediff.Full
	switch {
	case c.Stat:
		mode = treediff.StatOnly
	case c.NameOnly:
		mode = treediff.NamesOnly
	}
	done := env.UI.Page()
	err = d.Render(env.Ctx, env.UI.Out, mode, env.UI.ColorOut(), env.UI.Columns())
	done()
	if env.UI.PagerQuit(err) {
		err = nil // the person quit the pager before the end
	}
	if err != nil {
		return gitFailed(err)
	}
	return nil
}

// noChanges says that nothing differs; with paths, that nothing differs
// there, and how many files differ elsewhere, so an empty answer for one
// path is never read as "nothing changed".
func (c *CLI) noChanges(env *cli.Env, d treediff.Diff, to string) error {
	if len(d.Paths) == 0 {
		env.UI.Printf("No changes between %s and %s.\n", quote.C(c.From), to)
		return nil
	}
	all := d
	all.Paths = nil
	others, err := all.Files(env.Ctx)
	if err != nil {
		return gitFailed(err)
	}
	spec, _ := pathspec.ParseStored(d.Paths)
	where := quote.Join(spec.Shown(), ", ")
	if len(others) == 0 {
		env.UI.Printf("No changes to %s between %s and %s, nor anywhere else.\n", where, quote.C(c.From), to)
		return nil
	}
	env.UI.Printf("No changes to %s between %s and %s; %s changed elsewhere.\n", where, quote.C(c.From), to,
		plan.Count(len(others)))
	return nil
}

func gitFailed(err error) error {
	return errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "diff"},
		"git could not compare the checkpoints").Wrap(err)
}
