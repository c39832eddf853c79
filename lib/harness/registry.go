package harness

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/harness/claude"
	"github.com/git-venom/git-venom/lib/harness/codex"
	"github.com/git-venom/git-venom/lib/harness/gemini"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/harness/opencode"
	"github.com/git-venom/git-venom/lib/harness/qwen"
	"github.com/git-venom/git-venom/lib/suggest"
)

// Kinds are the harnesses git-venom works with: the one list. A harness is
// one package exporting its kind.Kind, and one line here.
var Kinds = []*kind.Kind{
	&claude.Kind,
	&codex.Kind,
	&gemini.Kind,
	&opencode.Kind,
	&qwen.Kind,
}

// Use registers every harness of Kinds with the floors below this package,
// which cannot import it: the rewind adapters (conversation) and the
// readings of a turn that ended with no hook (agents.Record). Each command
// calls it when its grammar is built; a command that does not rewinds no
// conversation and ends no turn from a harness's record. The shells of the
// harnesses are not registered: caller.Detect is given IsShell.
func Use() { useOnce.Do(func() { register(Kinds) }) }

var useOnce sync.Once

func register(ks []*kind.Kind) {
	for _, k := range ks {
		if k.Rewind != nil {
			conversation.Register(k.Name, k.Rewind)
		}
		if r := record(k); r.Over != nil || r.End != nil {
			agents.RegisterRecord(k.Name, r)
		}
	}
}

// record is the harness's own record of a turn, as agents reads it.
func record(k *kind.Kind) agents.Record {
	r := agents.Record{Over: k.TurnOver}
	if k.Transcript != nil && k.End != nil {
		r.End = func(ctx context.Context, getenv func(string) string, tree string, t *agents.Turn) (string, string) {
			path, err := k.Transcript(getenv, tree, t.Session)
			if err != nil {
				return "", ""
			}
			end, _ := k.End(ctx, path, "") // no anchor: the turn still ends
			return end.UUID, end.Version
		}
	}
	return r
}

// IsShell reports a command run from any harness's shell (Kind.Marks),
// for rollback.DetectCaller.
func IsShell(getenv func(string) string) bool {
	for _, k := range Kinds {
		if k.Marked(getenv) {
			return true
		}
	}
	return false
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
func NameList() string { return Or(Names()) }

// Unknown is invalid_params.harness for a name no harness has, with git's
// "did you mean" when the name is close to one (claude: claude-code).
func Unknown(name string) *errcode.Error {
	e := errcode.Newf(errcode.InvalidParamsHarness, map[string]string{"harness": name},
		"%q is not a harness git-venom knows", name)
	e.Hint("the harnesses: %s", NameList())
	switch close := suggest.Close(name, Names()); {
	case name != "" && len(close) == 1:
		e.Hint("did you mean %s?", close[0])
	case name != "" && len(close) > 1:
		e.Hint("did you mean one of %s?", Or(close))
	}
	return e
}

// Hints writes agents.HarnessHint of a command's error with the
// harnesses' names: the first one's whole command, then the others
// (cli.Hinter).
func Hints(e *errcode.Error) {
	i := slices.Index(e.Hints, agents.HarnessHint)
	if i < 0 {
		return
	}
	names := Names()
	e.Hints = slices.Replace(e.Hints, i, i+1,
		strings.Replace(agents.HarnessHint, "<harness>", names[0], 1), "(or "+Or(names[1:])+")")
}

// Via is hook install's --via as the harnesses make it (Kind.Via): the
// values of each that has a choice, the first one's default first, and
// what they mean, each said for its harness ("Codex: ...").
func Via() (values []string, help string) {
	var helps []string
	for _, k := range Kinds {
		for _, v := range k.Via {
			if !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		if len(k.Via) > 0 {
			helps = append(helps, k.Title+": "+k.ViaHelp)
		}
	}
	return values, strings.Join(helps, " ")
}

// NotifyHelp is the hook verb's help of its argument, said for each
// harness that has a notify program (Kind.NotifyHelp): "Codex: ...".
func NotifyHelp() string {
	var helps []string
	for _, k := range Kinds {
		if k.Notify != nil {
			helps = append(helps, k.Title+": "+k.NotifyHelp)
		}
	}
	return strings.Join(helps, " ")
}

// Or joins items as a person reads a list: "a, b or c".
func Or(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// Agents lists the harnesses' default agent ids (Kind.Agent), for help.
func Agents() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Agent
	}
	return out
}

// Where lists the file hook install writes for each harness in the scope,
// as help shows them: the repository's relative to its top, the user's
// under ~ (no harness's own folder variable set).
func Where(scope string) []string {
	getenv := func(k string) string {
		if k == "HOME" {
			return "~"
		}
		return ""
	}
	out := make([]string, 0, len(Kinds))
	for _, k := range Kinds {
		at := k.Settings
		if at == nil {
			at = k.Plugin
		}
		root, name := at(kind.Scope{Name: scope, Getenv: getenv})
		out = append(out, path.Join(filepath.ToSlash(root), name))
	}
	return out
}

// HookFile is a file of a worktree where `hook install` writes
// git-venom's hooks for a harness (its local or project settings file,
// or its plugin), and how to tell that a file's bytes hold them.
type HookFile struct {
	Path    string // slash-separated, relative to the worktree's top
	Harness string
	Ours    func(data []byte) bool
}

// HookFiles are the files of the worktree at top that `hook install`
// writes, for every harness of Kinds: a rollback leaves one that holds
// git-venom's hooks alone rather than take them away
// (docs/rollback.md#hook-settings).
func HookFiles(top string) []HookFile {
	none := func(string) string { return "" }
	var out []HookFile
	seen := map[string]bool{}
	for _, k := range Kinds {
		cmd := []byte(kind.HookCommand(k.Name))
		settings := func(data []byte) bool { return bytesContainsWord(data, cmd) }
		for _, scope := range []string{"local", "project"} {
			s := kind.Scope{Name: scope, Top: top, Getenv: none}
			if k.Settings != nil {
				if root, name := k.Settings(s); root == top && !seen[name] {
					seen[name] = true
					out = append(out, HookFile{Path: name, Harness: k.Name, Ours: settings})
				}
			}
			if k.Plugin != nil && k.PluginOurs != nil {
				if root, name := k.Plugin(s); root == top && !seen[name] {
					seen[name] = true
					out = append(out, HookFile{Path: name, Harness: k.Name, Ours: k.PluginOurs})
				}
			}
		}
	}
	return out
}

// bytesContainsWord reports cmd in data, not followed by a letter, digit
// or '-' (the hook of "codex" is not that of a "codex-x").
func bytesContainsWord(data, cmd []byte) bool {
	for {
		i := strings.Index(string(data), string(cmd))
		if i < 0 {
			return false
		}
		rest := data[i+len(cmd):]
		if len(rest) == 0 {
			return true
		}
		switch c := rest[0]; {
		case c == '-', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			data = rest
			continue
		}
		return true
	}
}
