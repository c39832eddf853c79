package checkpointcmd

import (
	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/doctor"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/ui"
)

// DoctorCmd checks the repository's checkpoints and state.
type DoctorCmd struct{}

// Run checks; it exits 1 only when a check fails (docs/json.md#agents-and-doctor).
func (c *DoctorCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	s.Damaged = nil // the report names each damaged line; no warning besides
	rep := doctor.Run(env.Ctx, s)
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
		w := ui.NewTable(env.UI.Out)
		for _, ch := range rep.Checks {
			w.Row(styles[ch.Status](ch.Status), quote.Text(ch.ID), quote.Text(ch.Message))
			if ch.Fix != nil {
				w.Row("", "", "fix: "+quote.Text(*ch.Fix))
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
