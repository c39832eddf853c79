package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/git-venom/git-venom/lib/ui"
)

// toyGo is the one verb both grammars below have; via says which ran it.
type toyGo struct {
	Name string `name:"name" help:"A name."`
	via  string
}

func (c *toyGo) Run(env *Env) error {
	env.UI.Printf("%s %s\n", c.via, c.Name)
	return nil
}

type toyOther struct {
	Level int `name:"level" help:"A level."`
}

func (c *toyOther) Run(env *Env) error { return nil }

// toyFull is a whole grammar with a flag its narrow part lacks (--loud).
type toyFull struct {
	Globals
	Loud  bool     `name:"loud" help:"Loud."`
	Go    toyGo    `cmd:"" help:"Go."`
	Other toyOther `cmd:"" help:"Other."`
}

// toyNarrowing is toyFull with a narrow part for `go ...`.
type toyNarrowing struct{ toyFull }

func (g *toyNarrowing) Narrow(args []string) any {
	if len(args) == 0 || args[0] != "go" {
		return nil
	}
	return &struct {
		Globals
		Go toyGo `cmd:"" help:"Go."`
	}{Go: toyGo{via: "narrow"}}
}

func runToy(grammar any, args ...string) (int, string, string) {
	streams, out, errOut := ui.Test()
	code := Run(&Env{UI: streams, Name: "git-venom-toy"}, grammar, args)
	return code, out.String(), errOut.String()
}

// runToyWhole is runToy with the whole grammar only, as before narrow parts.
func runToyWhole(grammar any, args ...string) (code int, out, errOut string) {
	streams, o, e := ui.Test()
	defer func() {
		if r := recover(); r != nil {
			code = int(r.(exitSignal))
		}
		out, errOut = o.String(), e.String()
	}()
	return runWhole(&Env{UI: streams, Name: "git-venom-toy"}, grammar, args), "", ""
}

// The narrow part runs what it reads; anything it cannot read, or might
// be help, the whole grammar reads, with the output a grammar without a
// narrow part gives, byte for byte. So for a lone --version, which any
// grammar's global flags read.
func TestRun_NarrowPartOrTheWholeGrammar(t *testing.T) {
	full := func() any { return &toyFull{Go: toyGo{via: "full"}} }
	narrowing := func() any { return &toyNarrowing{toyFull{Go: toyGo{via: "full"}}} }

	code, out, errOut := runToy(narrowing(), "go", "--name=x", "-q", "--json")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "narrow x\n", out, "the narrow part reads `go` and its flags")

	for _, args := range [][]string{
		{"go", "--name=x", "--loud"}, // a flag only the whole grammar has
		{"go", "--bogus"},            // an error: the whole grammar's words
		{"go", "extra"},
		{"go", "-h"}, {"go", "--help"}, {"go", "-qh"}, {"help", "go"}, // help: the whole grammar's
		{"other", "--level=2"},
		{"go", "--name", "-h"},
		{"--version"}, {"go", "--version"}, {"--version", "--bogus"},
	} {
		wantCode, wantOut, wantErr := runToyWhole(full(), args...)
		for _, g := range []any{full(), narrowing()} {
			code, out, errOut := runToy(g, args...)
			assert.Equal(t, wantCode, code, "%q", args)
			assert.Equal(t, wantOut, out, "%q", args)
			assert.Equal(t, wantErr, errOut, "%q", args)
		}
	}
	_, out, _ = runToy(narrowing(), "go", "--name=x", "--loud")
	assert.Equal(t, "full x\n", out)
	code, out, _ = runToy(full(), "--version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "git-venom-toy "+VersionString()+"\n", out, "a lone --version: the global flags read it")
}
