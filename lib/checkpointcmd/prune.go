package checkpointcmd

import (
	"context"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/retention"
	"github.com/git-venom/git-venom/lib/state"
)

// PruneCmd deletes checkpoints past retention (docs/checkpoints.md#retention-and-clean).
type PruneCmd struct {
	Agent  string `name:"agent" env:"VENOM_AGENT" help:"Only this agent's checkpoints."`
	DryRun bool   `name:"dry-run" help:"Say which checkpoints would be deleted; change nothing."`
	Keep   *int   `name:"keep" placeholder:"<n>" help:"Keep the newest n turn, fork and rollback checkpoints of each agent this time (default: venom.keep)."`
}

// PruneResult is prune's result.
type PruneResult struct {
	DryRun      bool               `json:"dry_run"`
	Checkpoints []retention.Pruned `json:"checkpoints"`
}

// Run prunes.
func (c *PruneCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	var tx *state.Txn
	if c.DryRun {
		// Every agent but the one named a stub: retention loads only
		// those of which what their live checkpoints come to
		// (agents.Kept) does not say what goes.
		ctx, cancel := context.WithTimeout(env.Ctx, s.Config.Timeout)
		defer cancel()
		tx, err = s.BeginStubs(ctx, lock.Holder{Op: "prune", Agent: c.Agent}, errcode.TimeoutLock, c.Agent)
	} else {
		// Every agent whole, so that its fold may also write again each
		// agent's file of the fold snapshot that lags (state.Begin).
		tx, err = begin(env.Ctx, s, "prune", c.Agent)
	}
	if err != nil {
		return err
	}
	defer tx.End()
	if c.Keep != nil {
		if *c.Keep < 0 {
			return errcode.Newf(errcode.InvalidParamsUsage, nil,
				"--keep=%d: keep 0 checkpoints or more", *c.Keep)
		}
		// This run's count only: venom.keep itself is not written.
		s.Config.Keep = *c.Keep
	}
	if c.Agent != "" {
		if _, err := tx.State.Resolve(c.Agent); err != nil {
			return err
		}
		if _, err := tx.State.Known(c.Agent); err != nil {
			return err
		}
	}
	var lines []retention.Pruned
	if c.DryRun {
		if lines, err = retention.PruneDryRun(tx, c.Agent); err != nil {
			return err
		}
	} else if lines, err = retention.Prune(env.Ctx, tx, c.Agent); err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(PruneResult{DryRun: c.DryRun, Checkpoints: lines})
	}
	any := false
	bold := env.UI.OutStyle(color.Bold)
	verb := "Pruned"
	if c.DryRun {
		verb = "Would prune"
	}
	for _, l := range lines {
		if len(l.Pruned) > 0 {
			any = true
			env.UI.Printf("%s %s: %s\n", verb, bold(quote.C(l.Agent)), quote.Join(l.Pruned, ", "))
		}
		printFailures(env, l.Agent, l.Failed)
	}
	if !any {
		env.UI.Printf("Nothing to prune.\n")
	}
	return nil
}

// begin takes the lock for a maintenance verb, waiting up to venom.timeout.
func begin(ctx context.Context, s *state.Store, op, agent string) (*state.Txn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Config.Timeout)
	defer cancel()
	return s.Begin(ctx, lock.Holder{Op: op, Agent: agent}, errcode.TimeoutLock)
}

func printFailures(env *cli.Env, agent string, failed []retention.Failed) {
	yellow := env.UI.ErrStyle(color.FgYellow)
	for _, f := range failed {
		env.UI.Errorf("%s the ref of %s/%s could not be deleted; the next prune retries: %s\n",
			yellow("warning:"), quote.C(agent), quote.C(f.Checkpoint), quote.Text(f.Reason))
	}
}
