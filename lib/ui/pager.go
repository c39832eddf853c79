package ui

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// PagerCommand picks the pager as git does: GIT_PAGER, then core.pager, then
// PAGER, then less. "" or "cat" means none.
func PagerCommand(getenv func(string) string, corePager string) string {
	for _, p := range []string{getenv("GIT_PAGER"), corePager, getenv("PAGER")} {
		if p != "" {
			return pagerOrNone(p)
		}
	}
	return "less"
}

func pagerOrNone(p string) string {
	if strings.TrimSpace(p) == "cat" {
		return ""
	}
	return p
}

// Pager is the pager of a command whose stdout is a terminal.
type Pager struct {
	cmdline string
	cmd     *exec.Cmd
	in      *os.File
	used    bool
}

// Page sends stdout through the pager, as git does for log and diff, until
// done is called (it waits for the pager; callable more than once). No
// pager (not a terminal, --no-pager, --json, GIT_PAGER=cat, git paging us
// already): nothing happens. LESS defaults to FRX, as in git.
//
//	defer env.UI.Page()()
func (s *Streams) Page() (done func()) {
	s.resolve()
	p := s.pager
	if p == nil || p.cmdline == "" || p.cmd != nil || s.term == nil {
		return func() {}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	cmd := exec.Command("sh", "-c", p.cmdline)
	environ := s.settings.Environ
	if environ == nil {
		environ = os.Environ()
	}
	cmd.Env = withDefault(withDefault(environ, "LESS", "FRX"), "LV", "-c")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, s.term, s.Err
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return func() {}
	}
	_ = r.Close()
	p.cmd, p.in, p.used = cmd, w, true
	out := s.Out
	s.Out = w
	var once sync.Once
	return func() {
		once.Do(func() {
			s.Out = out
			_ = w.Close()
			_ = cmd.Wait()
		})
	}
}

// PagerQuit reports an error that only says the person quit the pager
// before the end of the text: a write into it failed with EPIPE, or a git
// child writing there died of SIGPIPE. Such an ending is no failure.
func (s *Streams) PagerQuit(err error) bool {
	if s.pager == nil || !s.pager.used {
		return false
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws, ok := ee.Sys().(syscall.WaitStatus)
		return ok && ws.Signaled() && ws.Signal() == syscall.SIGPIPE
	}
	return errors.Is(err, syscall.EPIPE)
}

func withDefault(environ []string, name, value string) []string {
	for _, kv := range environ {
		if strings.HasPrefix(kv, name+"=") {
			return environ
		}
	}
	return append(append([]string{}, environ...), name+"="+value)
}

// Columns is the width of the terminal on stdout, or 0 when it is not one.
func (s *Streams) Columns() int {
	if s.term == nil {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(s.term.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
