package rollbackcmd

import (
	"bufio"
	"strings"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/rollback"
	"github.com/git-venom/git-venom/lib/state"
)

// interactive runs the dry run, shows it, asks, and runs the real call
// quoting the plan shown. A conflict.outside_edits refusal offers keep (the
// default) or overwrite, and shows the new plan (CONTRACT §1, RFC 12).
func interactive(env *cli.Env, s *state.Store, req rollback.Request) error {
	in := bufio.NewReader(env.UI.In)
	gold := env.UI.OutStyle(color.FgYellow, color.Bold)
	req.DryRun, req.Plan = true, ""
	p, err := rollback.DryRun(env.Ctx, s, req)
	if e, ok := errcode.As(err); ok && e.Code == errcode.ConflictOutsideEdits {
		env.UI.Printf("%s\n", gold("These paths changed outside the agent's turns:"))
		for _, r := range e.Data.(map[string]any)["repos"].([]map[string]any) {
			for _, path := range r["paths"].([]string) {
				env.UI.Printf("  %s\n", gold(quote.C(path)))
			}
		}
		env.UI.Printf("Keep them as they are, or overwrite them? [K/o] ")
		ans := answer(in)
		req.Outside = "keep"
		if ans == "o" || ans == "overwrite" {
			req.Outside = "overwrite"
		}
		p, err = rollback.DryRun(env.Ctx, s, req)
	}
	if err != nil {
		return err
	}
	screen(env, p)
	env.UI.Printf("Plan %s. Roll back? [y/N] ", quote.C(p.ID))
	if a := answer(in); a != "y" && a != "yes" {
		env.UI.Printf("Nothing was changed.\n")
		return nil
	}
	req.DryRun, req.Plan = false, p.ID
	res, err := rollback.Run(env.Ctx, s, req)
	if err != nil {
		return err
	}
	done(env, res)
	return nil
}

func answer(in *bufio.Reader) string {
	line, _ := in.ReadString('\n')
	return strings.ToLower(strings.TrimSpace(line))
}
