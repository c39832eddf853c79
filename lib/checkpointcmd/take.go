package checkpointcmd

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/ui"
)

// TakeCmd takes a checkpoint: git venom-checkpoint [--agent] [--reason] [--turn] [--label].
type TakeCmd struct {
	Agent     string  `name:"agent" env:"VENOM_AGENT" help:"The agent (default: VENOM_AGENT, or this worktree's only agent)."`
	Reason    string  `name:"reason" default:"manual" enum:"manual,turn_start,turn_end,takeover,takeback" help:"Why: manual, turn_start, turn_end, takeover or takeback."`
	Turn      string  `name:"turn" help:"The turn a turn_start opens or a turn_end closes (t<n>)."`
	Label     *string `name:"label" help:"A label for the checkpoint."`
	Isolation string  `name:"isolation" enum:",in_place,worktree,copy" default:"" help:"How the agent's tree is isolated, fixed at registration: in_place (default), worktree or copy."`
	Parent    string  `name:"parent" help:"The agent's parent, fixed at registration."`
}

// Run takes the checkpoint.
func (c *TakeCmd) Run(env *cli.Env) error {
	s, err := env.Store()
	if err != nil {
		return err
	}
	agent := c.Agent
	if agent == "" {
		st, err := s.ReadStubs() // which agent, not what it holds
		if err != nil {
			return err
		}
		if agent, err = st.Resolve(c.Agent); err != nil {
			return err
		}
	}
	// A big capture says what it stores, as git says what it counts:
	// "Capturing: 6000 files, 286.00 MiB", the seconds until then.
	var found atomic.Pointer[string]
	start := "Capturing " + quote.C(s.Repo.Top) + "…"
	progress := env.UI.ProgressOf(func(elapsed time.Duration) string {
		if f := found.Load(); f != nil {
			return *f
		}
		return fmt.Sprintf("%s %.0fs", start, elapsed.Seconds())
	})
	stop := captureBackstop(env, s.Config.Timeout, progress.Stop)
	defer stop()
	res, err := checkpoints.Take(env.Ctx, s, checkpoints.Request{
		Registration: checkpoints.Registration{Agent: agent, Isolation: c.Isolation, Parent: c.Parent},
		Reason:       c.Reason, Turn: c.Turn, Label: c.Label,
		Found: func(files int, bytes int64) {
			line := fmt.Sprintf("Capturing: %d %s, %s", files, plural(files, "file"), ui.Bytes(bytes))
			found.Store(&line)
		},
	})
	progress.Stop()
	if err != nil {
		return err
	}
	if env.JSON {
		return env.UI.JSON(res)
	}
	if env.UI.Quiet() {
		// -q as git's: no summary line, only what went wrong.
		printSkipped(env, res.Taken)
		return nil
	}
	if res.Unended != nil {
		// Said, not done silently: the turn's end was never reported (a
		// harness stopped mid-turn), and no capture marks it.
		fmt.Fprintf(env.UI.Err, "%s\n", ui.Wrap(fmt.Sprintf("note: turn %s/%s never reported its end: this turn_start closed it, "+
			"with no turn_end checkpoint; what changed after its last checkpoint counts as outside the agent's turns",
			quote.C(res.Agent), quote.C(*res.Unended)), ui.Columns80, "  "))
	}
	bold := env.UI.OutStyle(color.Bold)
	switch {
	case res.Checkpoint == nil:
		env.UI.Printf("No checkpoint: venom.enabled is false.\n")
	case res.Reused && res.Relabeled:
		// The reused checkpoint takes the label (docs/checkpoints.md#labels): said, not
		// done silently; its earlier labels still name it.
		was := "it had none"
		switch {
		case res.PreviousLabel != nil && *res.PreviousLabel == *c.Label:
			env.UI.Printf("Nothing changed since %s/%s: it is labeled %s already\n", quote.C(res.Agent),
				bold(quote.C(*res.Checkpoint)), quote.Always(*c.Label))
			return nil
		case res.PreviousLabel != nil:
			was = "was " + quote.Always(*res.PreviousLabel) + ", which stays"
		}
		env.UI.Printf("%s\n", ui.Wrap(fmt.Sprintf("Nothing changed since %s/%s: relabeled it %s (%s)", quote.C(res.Agent),
			bold(quote.C(*res.Checkpoint)), quote.Always(*c.Label), was), ui.Columns80, "  "))
	case res.Reused:
		env.UI.Printf("Nothing changed since %s/%s\n", quote.C(res.Agent), bold(quote.C(*res.Checkpoint)))
	default:
		env.UI.Printf("Checkpoint %s/%s\n", quote.C(res.Agent), bold(quote.C(*res.Checkpoint)))
		printSkipped(env, res.Taken)
	}
	// Once, at the capture that registers it: from then on the agent is
	// in every ref and record, and --agent may be left out for it.
	switch res.Registered {
	case "new":
		env.UI.Printf("Agent %s is registered now.\n", quote.C(res.Agent))
	case "again":
		env.UI.Printf("Agent %s is registered again (it was cleaned).\n", quote.C(res.Agent))
	}
	return nil
}

// printSkipped warns of the files a capture left out, on stderr as git's
// warnings. A path venom.exclude matched is not listed: the person asked
// for it, and it would repeat at every capture (--json lists it).
func printSkipped(env *cli.Env, e *journal.Entry) {
	if e == nil {
		return
	}
	yellow := env.UI.ErrStyle(color.FgYellow)
	for _, r := range e.Repos {
		for _, s := range r.Skipped {
			if s.Reason == capture.SkipExcluded {
				continue
			}
			if s.Reason == "unreadable" && strings.HasSuffix(s.Path, "/") {
				// A folder git could not open (too deep, or not readable):
				// nothing under it is in the checkpoint.
				fmt.Fprintf(env.UI.Err, "%s %s not captured (%s): git cannot open it; nothing in it is captured\n",
					yellow("warning:"), quote.C(elide(s.Path)), quote.C(s.Reason))
				continue
			}
			fmt.Fprintf(env.UI.Err, "%s %s not captured (%s, %s): the checkpoint holds git's indexed version, if any\n",
				yellow("warning:"), quote.C(elide(s.Path)), quote.C(s.Reason), ui.Bytes(s.Bytes))
		}
	}
}

// elide shortens a path too long to read on a line (a folder deeper than
// PATH_MAX is thousands of characters) to its ends; --json and the log
// carry it whole.
func elide(p string) string {
	const keep = 20
	if len(p) <= 4*keep {
		return p
	}
	return fmt.Sprintf("%s…%s (a %d-byte path)", strings.ToValidUTF8(p[:keep], ""), strings.ToValidUTF8(p[len(p)-keep:], ""), len(p))
}

// captureGrace is how long a capture past venom.timeout, or told to stop,
// gets to end by itself before captureBackstop ends it.
const captureGrace = 5 * time.Second

// captureBackstop ends a capture that outlives venom.timeout by more than
// captureGrace: a read no context reaches may never return (libgit2
// opening a FIFO planted as a pack index waits for a writer, as git does).
// The process exits with timeout.checkpoint, the lock's holder record
// cleared, leaving what a kill leaves, which every step survives
// (docs/checkpoints.md#configuration). The returned func disarms it.
func captureBackstop(env *cli.Env, timeout time.Duration, quiet func()) func() {
	ctx := env.Ctx
	b := &cli.Backstop{Grace: captureGrace, Code: errcode.TimeoutCheckpoint.Class().Exit(), Exit: env.Exit, Last: func(cause string) {
		lock.ReleaseAll(ctx)
		quiet()
		msg := "the capture passed venom.timeout and did not end; stopped"
		if cause != "deadline" {
			msg = "the capture did not end after " + cause + "; stopped"
		}
		cli.Report(env, errcode.Newf(errcode.TimeoutCheckpoint, map[string]string{"repo": "."}, "%s", msg))
	}}
	b.Start(time.Now().Add(timeout))
	return b.Stop
}
