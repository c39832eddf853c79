package checkpointcmd

import (
	"fmt"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/share"
	"github.com/git-venom/git-venom/lib/ui"
)

// PushCmd sends an agent's checkpoints to a remote, on request only
// (docs/checkpoints.md#refs): git venom-checkpoint push [<remote>] [--agent=A].
type PushCmd struct {
	Remote string `arg:"" optional:"" default:"origin" help:"A configured remote (default: origin)."`
	Agent  string `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or this worktree's only agent)."`
}

// Run pushes.
func (c *PushCmd) Run(env *cli.Env) error {
	s, st, err := env.Read()
	if err != nil {
		return err
	}
	a, err := st.Named(c.Agent)
	if err != nil {
		return err
	}
	res, err := share.Push(env.Ctx, s, a, c.Remote)
	if err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("Pushed %s of %s and its %s to %s, under %s",
		ui.Plural(len(res.Checkpoints), "checkpoint", "checkpoints"), quote.C(a.ID),
		ui.Plural(res.Records, "log record", "log records"), quote.C(res.Remote), quote.C(res.Ref)), ui.Columns80, "  "))
	if len(res.Deleted) > 0 {
		env.UI.Printf("Removed from %s: %s\n", quote.C(res.Remote), quote.Join(res.Deleted, ", "))
	}
	return nil
}

// FetchCmd brings the checkpoints other machines pushed to a remote, after
// checking them, under refs/venom/remotes/<remote>/ (docs/checkpoints.md#refs).
type FetchCmd struct {
	Remote string `arg:"" optional:"" default:"origin" help:"A configured remote (default: origin)."`
}

// Run fetches.
func (c *FetchCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	tx, err := begin(env.Ctx, s, "fetch", "")
	if err != nil {
		return err
	}
	defer tx.End()
	res, err := share.Fetch(env.Ctx, s, c.Remote)
	if err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	for _, cp := range res.Copies {
		env.UI.Printf("%s\n", ui.Wrap("Fetched "+quote.C(cp.Copy)+": "+quote.Join(cp.Checkpoints, ", "), ui.Columns80, "  "))
	}
	if len(res.Copies) == 0 {
		env.UI.Printf("Nothing shared on %s.\n", quote.C(res.Remote))
	}
	for _, r := range res.Refused {
		if r.Cap != nil {
			env.UI.Errorf("warning: refused %s (%s: %d, past %s %d)\n", quote.C(r.Ref), r.Reason, r.Cap.Found, r.Cap.Key, r.Cap.Limit)
			continue
		}
		env.UI.Errorf("warning: refused %s (%s)\n", quote.C(r.Ref), r.Reason)
	}
	return nil
}
