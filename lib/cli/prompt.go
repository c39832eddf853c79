package cli

import (
	"bufio"
	"strings"
)

// AbortCode is the exit status of a dialogue ended by Ctrl-C or end of
// input: 128+SIGINT, what a shell reports for a command Ctrl-C stopped.
const AbortCode = 130

// Prompter reads answers from the terminal. Each read runs beside a wait
// for the command's context, which Ctrl-C (SIGINT) cancels: a read blocked
// on the terminal would otherwise take the next Enter as the default answer.
type Prompter struct {
	env   *Env
	lines chan line
	in    *bufio.Reader
}

type line struct {
	text string
	err  error
}

// NewPrompter reads env's standard input.
func NewPrompter(env *Env) *Prompter {
	return &Prompter{env: env, lines: make(chan line, 1), in: bufio.NewReader(env.UI.In)}
}

// Answer returns the answer, lower case and trimmed; ok is false when the
// person pressed Ctrl-C or ended the input (Ctrl-D), which is no answer.
func (p *Prompter) Answer() (string, bool) {
	go func() {
		s, err := p.in.ReadString('\n')
		p.lines <- line{s, err}
	}()
	select {
	case <-p.env.Ctx.Done():
		return "", false
	case l := <-p.lines:
		if l.err != nil {
			return "", false
		}
		return strings.ToLower(strings.TrimSpace(l.text)), true
	}
}

// Choose reads the answer to a question whose default is No: short or
// long is yes, an empty answer, n or no is no, and anything else is asked
// again with again, never taken for the default (as git add -p asks again
// where git clean -i would take "maybe" for no). ok is false when the
// dialogue was ended (Ctrl-C, Ctrl-D).
func (p *Prompter) Choose(short, long, again string) (yes, ok bool) {
	for {
		ans, ok := p.Answer()
		switch {
		case !ok:
			return false, false
		case ans == short || ans == long:
			return true, true
		case ans == "" || ans == "n" || ans == "no":
			return false, true
		}
		p.env.UI.Printf("%s", again)
	}
}
