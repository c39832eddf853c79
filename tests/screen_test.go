package tests

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// screen is a shell command line running on a pseudo-terminal (script(1))
// as a person runs it: a test types keys and reads what the terminal
// showed, and waits for the command to end.
type screen struct {
	t    *testing.T
	cmd  *exec.Cmd
	keys io.Writer
	done chan struct{}

	mu    sync.Mutex
	shown bytes.Buffer
}

// startScreen starts line in the repository's folder on a terminal,
// with env's environment and extra's variables after it.
func (e *Env) startScreen(t *testing.T, line string, extra ...string) *screen {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed")
	}
	c := exec.Command("script", "-qec", line, "/dev/null")
	c.Dir = e.Dir
	c.Env = append(append(e.Environ(), "TERM=xterm"), extra...)
	in, err := c.StdinPipe()
	require.NoError(t, err)
	s := &screen{t: t, cmd: c, keys: in, done: make(chan struct{})}
	c.Stdout = writerFunc(func(p []byte) (int, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.shown.Write(p)
	})
	c.Stderr = c.Stdout
	require.NoError(t, c.Start())
	go func() { _ = c.Wait(); close(s.done) }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-s.done
	})
	return s
}

// Shown is everything the terminal showed so far.
func (s *screen) Shown() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shown.String()
}

// Type types keys as they are: "\n" is Enter, "\t" Tab, "\x03" Ctrl-C.
func (s *screen) Type(keys string) {
	s.t.Helper()
	_, err := io.WriteString(s.keys, keys)
	require.NoError(s.t, err)
}

// WaitFor waits until the screen shows want after position from, and
// returns the position just after it.
func (s *screen) WaitFor(from int, want string) int {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if i := strings.Index(s.Shown()[from:], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-s.done:
			if i := strings.Index(s.Shown()[from:], want); i >= 0 {
				return from + i + len(want)
			}
			s.t.Fatalf("the command ended without showing %q; the screen showed:\n%s", want, s.Shown())
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.t.Fatalf("the screen never showed %q; it showed:\n%s", want, s.Shown())
	return 0
}

// Interrupt types Ctrl-C at a shell's line editor once the shell reads
// keys again, and returns the position after the prompt it then shows.
// A shell still finishing a completion (listing the matches, redrawing
// the line below them) can drop an interrupt that comes then: zsh does
// on a busy machine, and the line stays as it was. The shell reads a key
// only between such steps, so Interrupt first types mark, a word the
// screen does not show yet, and waits for the shell to echo it.
func (s *screen) Interrupt(mark, prompt string) int {
	s.t.Helper()
	from := len(s.Shown())
	s.Type(mark)
	at := s.WaitFor(from, mark)
	s.Type("\x03")
	return s.WaitFor(at, prompt)
}

// Ended reports whether the command has ended.
func (s *screen) Ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Wait waits for the command's end and returns what the screen showed
// and the exit code.
func (s *screen) Wait() (string, int) {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Fatalf("no end; the screen showed:\n%s", s.Shown())
	}
	return s.Shown(), s.cmd.ProcessState.ExitCode()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
