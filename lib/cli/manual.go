package cli

import (
	"os/exec"
	"strings"
)

// wantsManual reports --help among the arguments before "--": as git's
// `git <command> --help`, it opens the command's manual, for every verb
// (git venom-checkpoint list --help opens git-venom-checkpoint(1)); -h
// and the help verb print the short usage.
func wantsManual(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--help" {
			return true
		}
	}
	return false
}

// showManual opens the command's manual as git does, through `git help`
// (help.format, man.viewer, the pager, plain text when piped), and
// reports false, having printed nothing, when it cannot: no man program
// or no page installed. The caller then prints the usage text instead.
func showManual(env *Env) bool {
	page := "git-" + strings.TrimPrefix(env.Name, "git-")
	man, err := exec.LookPath("man")
	if err != nil {
		return false
	}
	where := exec.Command(man, "-w", page)
	where.Env, where.Dir = env.Environ, env.Dir
	if where.Run() != nil {
		return false
	}
	help := exec.Command("git", "help", strings.TrimPrefix(page, "git-"))
	help.Env, help.Dir = env.Environ, env.Dir
	help.Stdin, help.Stdout, help.Stderr = env.UI.In, env.UI.Out, env.UI.Err
	return help.Run() == nil
}

// shortHelp is args with --help read as -h, the usage text.
func shortHelp(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "--" {
			break
		}
		if a == "--help" {
			out[i] = "-h"
		}
	}
	return out
}
