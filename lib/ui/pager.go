package ui

import (
	"io"
	"os"
	"os/exec"
	"strings"

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

// Pager is a running pager that a command writes its output into.
type Pager struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

// StartPager runs cmdline through the shell with stdout as its output, when
// stdout is a terminal; otherwise it returns nil and the command writes to
// stdout directly. As git does, LESS defaults to FRX (quit when the text fits
// one screen, keep colours, leave the screen alone) and LV to -c.
func (s *Streams) StartPager(cmdline string, environ []string) *Pager {
	if !s.OutTTY || cmdline == "" {
		return nil
	}
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Env = withDefault(withDefault(environ, "LESS", "FRX"), "LV", "-c")
	cmd.Stdout, cmd.Stderr = s.Out, s.Err
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		return nil
	}
	return &Pager{cmd: cmd, in: in}
}

// Writer is where the paged text goes.
func (p *Pager) Writer() io.Writer { return p.in }

// Wait closes the pager's input and waits until the person quits it.
func (p *Pager) Wait() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
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
	f, ok := s.Out.(*os.File)
	if !ok || !s.OutTTY {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
