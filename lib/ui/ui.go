// Package ui is the streams of one command: TTY detection done once, colour
// per stream, the pager, progress, JSON output. Only *cmd packages print,
// through it.
package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// Streams are a command's standard streams.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	InTTY    bool
	OutTTY   bool
	ErrTTY   bool

	// term is stdout's terminal, kept for its width while Out is a pager.
	term *os.File

	settings Settings
	once     sync.Once
	colorOut bool
	colorErr bool
	// colorHint: hint lines on stderr are coloured, as git's advice,
	// with hintColor and hintReset (color.advice.hint and .reset).
	colorHint            bool
	hintColor, hintReset string
	pager                *Pager
}

// Settings are what decides colour, paging and chatter, set once the
// command line is parsed (cli.Run).
type Settings struct {
	// Color is --color: "" when not given, else auto, always or never.
	Color string
	// NoPager is --no-pager.
	NoPager bool
	// Quiet is -q/--quiet: no progress and no lock-wait messages.
	Quiet bool
	// JSON is --json: no colour, no pager, no progress.
	JSON bool
	// Getenv reads the command's environment, and Environ is all of it
	// (for the pager's).
	Getenv  func(string) string
	Environ []string
	// Config reads git config keys (core.pager, color.ui, color.venom,
	// color.advice, color.advice.hint, color.advice.reset), the last
	// value of each in git's order of scopes; called at most once, and
	// only when colour or the pager is first needed.
	Config func(keys ...string) map[string]string
	// GitColor is the escape sequence git gives a colour key (git config
	// --get-color), asked only for a color.advice slot that is set.
	GitColor func(key string) string
}

// System probes the process's own streams once.
func System() *Streams {
	s := &Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
	}
	if s.OutTTY {
		s.term = os.Stdout
	}
	s.settings.Getenv = os.Getenv
	return s
}

// Test returns streams over buffers.
func Test() (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	return &Streams{In: &bytes.Buffer{}, Out: out, Err: errb}, out, errb
}

// Configure sets what the command line and environment say about output.
func (s *Streams) Configure(set Settings) {
	if set.Getenv == nil {
		set.Getenv = func(string) string { return "" }
	}
	s.settings = set
}

// Quiet reports -q/--quiet.
func (s *Streams) Quiet() bool { return s.settings.Quiet }

// resolve decides colour and the pager on first need, reading git config
// only then.
func (s *Streams) resolve() {
	s.once.Do(func() {
		set := s.settings
		if set.JSON {
			return
		}
		var cfg map[string]string
		if set.Config != nil {
			cfg = set.Config("core.pager", "color.ui", "color.venom", "color.advice",
				"color.advice.hint", "color.advice.reset")
		}
		mode := ColorMode(set.Color, cfg["color.venom"], cfg["color.ui"])
		getenv := set.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		s.colorOut = ColorOn(mode, s.OutTTY, getenv)
		s.colorErr = ColorOn(mode, s.ErrTTY, getenv)
		// git's color.advice, else the setting the rest follows.
		hint := mode
		if set.Color == "" && cfg["color.advice"] != "" {
			hint = ColorMode(cfg["color.advice"], "", "")
		}
		s.colorHint = ColorOn(hint, s.ErrTTY, getenv)
		// git's advice.c: the hint slot (yellow unless set), then the
		// reset slot, around the whole line.
		s.hintColor, s.hintReset = "\x1b[33m", "\x1b[m"
		if s.colorHint && set.GitColor != nil {
			if _, ok := cfg["color.advice.hint"]; ok {
				s.hintColor = set.GitColor("color.advice.hint")
			}
			if _, ok := cfg["color.advice.reset"]; ok {
				s.hintReset = set.GitColor("color.advice.reset")
			}
		}
		if s.OutTTY && !set.NoPager && getenv("GIT_PAGER_IN_USE") == "" {
			s.pager = &Pager{cmdline: PagerCommand(getenv, cfg["core.pager"])}
		}
	})
}

// Style colours text for one stream, or leaves it plain.
type Style func(a ...any) string

func (s *Streams) style(on bool, attrs ...color.Attribute) Style {
	c := color.New(attrs...)
	if on {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c.Sprint
}

// OutStyle styles for stdout.
func (s *Streams) OutStyle(attrs ...color.Attribute) Style {
	s.resolve()
	return s.style(s.colorOut, attrs...)
}

// ErrStyle styles for stderr.
func (s *Streams) ErrStyle(attrs ...color.Attribute) Style {
	s.resolve()
	return s.style(s.colorErr, attrs...)
}

// HintStyle styles a hint line on stderr as git colours its advice
// ("hint: ..." in color.advice.hint, yellow by default, when
// color.advice says so), or leaves it plain.
func (s *Streams) HintStyle() Style {
	s.resolve()
	if !s.colorHint {
		return fmt.Sprint
	}
	return func(a ...any) string { return s.hintColor + fmt.Sprint(a...) + s.hintReset }
}

// ColorOut reports whether stdout gets colour.
func (s *Streams) ColorOut() bool {
	s.resolve()
	return s.colorOut
}

// JSON writes v as one line of JSON on stdout, without HTML escaping.
func (s *Streams) JSON(v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.Out.Write(append(b, '\n'))
	return err
}

// Marshal renders v as compact JSON without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Printf writes human text on stdout.
func (s *Streams) Printf(format string, args ...any) { fmt.Fprintf(s.Out, format, args...) }

// Errorf writes human text on stderr.
func (s *Streams) Errorf(format string, args ...any) { fmt.Fprintf(s.Err, format, args...) }
