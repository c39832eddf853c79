// Package clitest is the world of the unit tests above lib/state: the
// *cmd packages' commands run in-process (World), the grammar and verbs
// through cli.Run, the entry point main uses, with test streams in place
// of the terminal (as gh's iostreams.Test), on a real repository made
// with git in t.TempDir(); the others open a store on one (Store). The
// end-to-end tests (tests/) run a command as the built binary unless it
// gives the same outcome in their process (tests/README.md).
package clitest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/ui"
)

// World is one repository with its own HOME and git config, and nothing
// of the caller's environment but PATH: no VENOM_*, CLAUDECODE or CODEX_*
// makes a command look like an agent's.
type World struct {
	t       *testing.T
	Dir     string // the repository's top level
	Environ []string
}

// New makes a repository on branch main with one commit holding a.txt
// ("a\n").
func New(t *testing.T) *World {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	w := &World{t: t, Dir: filepath.Join(root, "repo"), Environ: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"), "LANG=C", "TERM=dumb",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T",
		"GIT_COMMITTER_EMAIL=t@example.com"}}
	require.NoError(t, os.MkdirAll(w.Dir, 0o755))
	w.Git("init", "-q", "-b", "main")
	w.Write("a.txt", "a\n")
	w.Git("add", "a.txt")
	// Without git's maintenance run --auto after the commit: a git start
	// that finds nothing to do in a repository this small.
	w.Git("-c", "maintenance.auto=false", "commit", "-qm", "base")
	return w
}

// Git runs plain git in the repository and returns its trimmed output,
// failing the test when git fails.
func (w *World) Git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = w.Dir, w.Environ
	out, err := cmd.CombinedOutput()
	require.NoError(w.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// Write writes a file of the work tree, making its folders.
func (w *World) Write(rel, content string) {
	w.t.Helper()
	p := filepath.Join(w.Dir, rel)
	require.NoError(w.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(w.t, os.WriteFile(p, []byte(content), 0o644))
}

// Read reads a file of the work tree.
func (w *World) Read(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.Dir, rel))
	require.NoError(w.t, err)
	return string(b)
}

// Result is one command's exit code and streams.
type Result struct {
	Code     int
	Out, Err string
}

// Run is one `git <name> args...` with stdout and stderr piped: name is
// the binary's ("git-venom-rollback"), grammar a fresh one from the
// package's New.
func (w *World) Run(name string, grammar any, args ...string) Result {
	w.t.Helper()
	streams, out, errOut := ui.Test()
	return w.run(streams, out, errOut, name, grammar, args)
}

// Terminal is Run on a terminal: stdin, stdout and stderr are TTYs, and
// the person at it types input. Colour stays off (TERM=dumb) and no pager
// starts (the streams have no terminal file).
func (w *World) Terminal(input, name string, grammar any, args ...string) Result {
	w.t.Helper()
	streams, out, errOut := ui.Test()
	streams.In = strings.NewReader(input)
	streams.InTTY, streams.OutTTY, streams.ErrTTY = true, true, true
	return w.run(streams, out, errOut, name, grammar, args)
}

func (w *World) run(streams *ui.Streams, out, errOut interface{ String() string }, name string, grammar any, args []string) Result {
	env := &cli.Env{Ctx: context.Background(), UI: streams, Environ: w.Environ, Dir: w.Dir,
		Name: name, JSON: cli.WantsJSON(args)}
	code := cli.Run(env, grammar, args)
	return Result{Code: code, Out: out.String(), Err: errOut.String()}
}
