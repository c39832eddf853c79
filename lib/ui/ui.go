// Package ui is the streams of one command: TTY detection done once, colour
// per stream, JSON output. Only *cmd packages print, through it.
package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

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
	colorOut bool
	colorErr bool
}

// System probes the process's own streams once.
func System() *Streams {
	s := &Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
	}
	noColor := os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb"
	s.colorOut = s.OutTTY && !noColor
	s.colorErr = s.ErrTTY && !noColor
	return s
}

// Test returns streams over buffers.
func Test() (*Streams, *bytes.Buffer, *bytes.Buffer) {
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	return &Streams{In: &bytes.Buffer{}, Out: out, Err: errb}, out, errb
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

// Out styles for stdout.
func (s *Streams) OutStyle(attrs ...color.Attribute) Style { return s.style(s.colorOut, attrs...) }

// ErrStyle styles for stderr.
func (s *Streams) ErrStyle(attrs ...color.Attribute) Style { return s.style(s.colorErr, attrs...) }

// ColorOut reports whether stdout gets colour.
func (s *Streams) ColorOut() bool { return s.colorOut }

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
