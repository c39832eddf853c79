package harness

import (
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/caller"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/harness/claude"
	"github.com/git-venom/git-venom/lib/harness/codex"
	"github.com/git-venom/git-venom/lib/harness/gemini"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/harness/opencode"
)

// Kinds are the harnesses git-venom works with: the one list. A harness is
// one package exporting its kind.Kind, and one line here.
var Kinds = []*kind.Kind{
	&claude.Kind,
	&codex.Kind,
	&gemini.Kind,
	&opencode.Kind,
}

// Harness names, as agent.registered records them.
var (
	ClaudeCode = claude.Kind.Name
	Codex      = codex.Kind.Name
)

// Everything keyed by harness elsewhere is derived from Kinds here: the
// rewind adapters, the readings of a turn ended with no hook, and the
// environment marks of an agent's shell.
func init() {
	for _, k := range Kinds {
		if k.Rewind != nil {
			conversation.Register(k.Name, k.Rewind)
		}
		if k.TurnOver != nil {
			agents.RegisterTurnOver(k.Name, k.TurnOver)
		}
		if k.Caller != nil {
			caller.RegisterShell(k.Caller)
		}
	}
}

// Lookup returns the harness of that name, or nil.
func Lookup(name string) *kind.Kind {
	i := slices.IndexFunc(Kinds, func(k *kind.Kind) bool { return k.Name == name })
	if i < 0 {
		return nil
	}
	return Kinds[i]
}

// Names lists the harnesses' names, for help and errors.
func Names() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Name
	}
	return out
}

// NameList is Names as a person reads it: "claude-code, codex, gemini-cli or
// opencode".
func NameList() string {
	n := Names()
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}
