package cli

import (
	"fmt"
	"strings"

	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/ui"
)

// configureOutput hands the streams what decides colour, the pager and
// chatter: the global flags, the environment, and git config read from the
// repository only when colour or the pager is first needed.
func (e *Env) configureOutput(grammar any, args []string) {
	set := ui.Settings{JSON: e.JSON, Getenv: e.Getenv, Environ: e.Environ, Config: e.gitConfig, GitColor: e.gitColor}
	type hasGlobals interface{ GlobalFlags() *Globals }
	if g, ok := grammar.(hasGlobals); ok {
		f := g.GlobalFlags()
		set.NoPager, set.Quiet = f.NoPager, f.Quiet
		if colorGiven(args) {
			set.Color = f.Color // else color.venom and color.ui decide
		}
	}
	e.UI.Configure(set)
}

// gitConfig reads the output keys of git config; outside a repository, or
// when its state cannot be opened, there are none (the command then reports
// what is wrong).
func (e *Env) gitConfig(keys ...string) map[string]string {
	out := map[string]string{}
	s, err := e.Store()
	if err != nil {
		return out
	}
	entries, err := s.Repo.ConfigLast(e.Ctx, keys...)
	if err != nil {
		return out
	}
	for k, v := range entries {
		if !v.HasValue {
			v.Value = "true"
		}
		out[k] = v.Value
	}
	return out
}

// gitColor is the escape sequence git makes of a colour key's value
// (git config --get-color), so that every colour git takes (names,
// 256-colour numbers, #rrggbb, attributes) is written as git writes it;
// "" when git cannot say.
func (e *Env) gitColor(key string) string {
	s, err := e.Store()
	if err != nil {
		return ""
	}
	out, err := s.Repo.Git.Run(e.Ctx, "config", "--get-color", key)
	if err != nil {
		return ""
	}
	return string(out)
}

// waitingForLock tells a person at a terminal who holds the lock they wait
// for, after about a second, with the seconds waited.
func (e *Env) waitingForLock(h lock.Holder) (stop func()) {
	msg := "waiting for the lock…"
	if h.PID != 0 {
		msg = fmt.Sprintf("waiting for the lock held by %s (pid %d)…", quote.C(h.Op), h.PID)
	}
	return e.UI.Progress(msg).Stop
}

// colorGiven reports whether the command line names --color: its default,
// auto, must not hide color.venom or color.ui.
func colorGiven(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--color" || strings.HasPrefix(a, "--color=") {
			return true
		}
	}
	return false
}
