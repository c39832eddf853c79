package checkpointcmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/doctor"
	"github.com/git-venom/git-venom/lib/quote"
)

// DoctorCmd checks the repository's checkpoints and state.
type DoctorCmd struct{}

// Run checks; it exits 1 only when a check fails (CONTRACT 8.20).
func (c *DoctorCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	s.Damaged = nil // the report names each damaged line; no warning besides
	rep := doctor.Run(env.Ctx, s)
	rep.CodexHooks(env.Ctx, s, env.Getenv)
	if env.JSON {
		if err := env.UI.JSON(rep); err != nil {
			return err
		}
	} else {
		styles := map[string]func(...any) string{
			doctor.OK:   env.UI.OutStyle(color.FgGreen),
			doctor.Warn: env.UI.OutStyle(color.FgYellow, color.Bold),
			doctor.Fail: env.UI.OutStyle(color.FgRed, color.Bold),
		}
		// Messages and fixes name refs, paths and log lines: escaped, so
		// none reaches the terminal as a control.
		w := tabwriter.NewWriter(env.UI.Out, 0, 4, 2, ' ', 0)
		for _, ch := range rep.Checks {
			fmt.Fprintf(w, "%s\t%s\t%s\n", styles[ch.Status](ch.Status), quote.Text(ch.ID), quote.Text(ch.Message))
			if ch.Fix != nil {
				fmt.Fprintf(w, "\t\tfix: %s\n", quote.Text(*ch.Fix))
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if !rep.OK {
		return cli.Silent{Code: 1} // failed.* class: the report says which check
	}
	return nil
}
