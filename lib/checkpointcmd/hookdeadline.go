package checkpointcmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/lock"
)

// hookGrace is how long a hook past its deadline, or told to stop by
// SIGTERM, SIGINT or SIGHUP (cli.StopSignals), gets to end by itself (its git commands killed, its
// checkpoint.failed written) before the backstop ends it.
const hookGrace = time.Second

// hookDeadline holds a hook to venom.timeout from its start (docs/harness.md#hooks):
// the command's context ends then, or at SIGTERM, SIGINT or SIGHUP (a
// harness closing its terminal), and every step
// that honours it returns (the wait for the lock, git, the transcript's
// reading). hookGrace later, a backstop ends the process with exit 0 and
// one line on stderr if a step did not, clearing the lock's holder record;
// the kernel drops the lock itself as the process ends.
type hookDeadline struct {
	start    time.Time
	parent   context.Context // Main's, which cli.StopSignals end
	cancel   context.CancelFunc
	backstop *cli.Backstop
}

// startHookDeadline gives env.Ctx the deadline of venom.timeout, read
// before the payload: a harness that never closes the hook's stdin must not
// keep it past its deadline. The key is the user's (global and system
// scopes), the same whichever repository the payload names; until it is
// read, and if it cannot be, the default holds.
func startHookDeadline(env *cli.Env) *hookDeadline {
	d := &hookDeadline{start: time.Now(), parent: env.Ctx}
	d.backstop = &cli.Backstop{Grace: hookGrace, Code: 0, Exit: env.Exit, Last: func(cause string) {
		lock.ReleaseAll(d.parent)
		if cause == "deadline" {
			fmt.Fprintf(env.UI.Err, "git-venom hook: %s: still running %s past venom.timeout; "+
				"stopped, the lock left free\n", errcode.TimeoutCheckpoint, hookGrace)
			return
		}
		fmt.Fprintf(env.UI.Err, "git-venom hook: stopped (%s) before the event was recorded; "+
			"the lock left free\n", cause)
	}}
	timeout := config.Defaults().Timeout
	env.Ctx, d.cancel = context.WithDeadline(d.parent, d.start.Add(timeout))
	d.backstop.Start(d.start.Add(timeout))
	// A harness that stopped reading the hook's stdout or stderr must not
	// kill it in the middle of a transaction, as SIGPIPE would: with the
	// signal notified, such a write fails with EPIPE instead (os/signal),
	// and git's children still get the default.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	g := &gitcli.Runner{Dir: env.Dir, Env: gitcli.CleanEnv(env.Environ)} // when git must read the files
	if cfg, err := config.Load(env.Ctx, g, env.Environ); err == nil {
		d.set(env, cfg.Timeout)
	}
	return d
}

// set moves the deadline to venom.timeout as configured.
func (d *hookDeadline) set(env *cli.Env, timeout time.Duration) {
	d.cancel()
	env.Ctx, d.cancel = context.WithDeadline(d.parent, d.start.Add(timeout))
	d.backstop.Move(d.start.Add(timeout))
}

// explain says that a signal, not venom.timeout, ended a step that
// failed once the hook was told to stop (a wait for the lock, a capture).
func (d *hookDeadline) explain(err error) error {
	if d.parent.Err() == nil {
		return err
	}
	e := errcode.From(err, errcode.FailedInternal)
	sig := interrupt.Why(d.parent)
	return errcode.Newf(e.Code, e.Data, "stopped by a signal (%s) before the event was recorded", sig).Wrap(err)
}

// end disarms the backstop: the hook is ending by itself.
func (d *hookDeadline) end() {
	d.backstop.Stop()
	d.cancel()
}
