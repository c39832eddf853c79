package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/harness/jsontext"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/harness/ojson"
)

// Scopes of hook install: which of the harness's settings files it writes
// (each Kind.Settings says where).
const (
	ScopeLocal   = "local"   // the repository's, kept out of commits where the harness has such a file
	ScopeProject = "project" // the repository's, meant to be committed
	ScopeUser    = "user"    // the user's, for every repository
)

// Ways Codex can call the hook (docs/harness.md#hook-agents).
const (
	ViaAuto   = "auto"   // hooks when the installed Codex is one known to have them, notify otherwise
	ViaHooks  = "hooks"  // hooks.json
	ViaNotify = "notify" // config.toml's notify program
	ViaBoth   = "both"
)

// HooksSince is the oldest Codex whose hooks git-venom has seen work
// (tests/testdata/hooks/codex); "auto" uses notify for older ones.
var HooksSince = [3]int{0, 171, 0}

// Install describes hook install or uninstall.
type Install struct {
	Harness   string
	Agent     string // only written into the command when given
	Isolation string
	Scope     string
	Via       string // Codex only
	Top       string // the repository's top level
	Getenv    func(string) string
	Timeout   int // the handler's timeout in seconds
	// PerTool: the hook also runs after shell tool calls and marks each
	// call that changed the tree (Kind.PerToolMatcher).
	PerTool bool
}

// File is one settings file as install or uninstall leaves it.
type File struct {
	Path    string
	Changed bool
	Content []byte // nil: the file is removed (uninstall of a file install created)
	Existed bool
	mode    os.FileMode
	at      place
}

// Command is the hook's command line.
func (in Install) Command() string {
	cmd := kind.HookCommand(in.Harness)
	if in.Agent != "" {
		cmd += " --agent=" + in.Agent
	}
	if in.Isolation != "" {
		cmd += " --isolation=" + in.Isolation
	}
	if in.PerTool {
		cmd += " --per-tool"
	}
	return cmd
}

// ours reports a hook command git-venom installed for the harness.
func (in Install) ours(cmd string) bool { return kind.IsHookCommand(in.Harness, cmd) }

// events are the hook events installed for the harness (Kind.Events).
// SessionEnd and Codex's Interrupt are left out: their hooks are cut after
// 1.5 s and 3 s, or not awaited, too short for a capture, and the next
// prompt ends an interrupted turn anyway.
func (in Install) events() []kind.Event {
	k := Lookup(in.Harness)
	if k == nil {
		return nil
	}
	if !in.PerTool || k.PerToolMatcher == "" {
		return k.Events
	}
	out := slices.Clone(k.Events)
	for i, ev := range out {
		if ev.Name == PostToolUse || k.Aliases[ev.Name] == PostToolUse {
			out[i].Matcher = k.PerToolMatcher
		}
	}
	return out
}

// Plan computes the files install (or uninstall) leaves, writing nothing.
func (in Install) Plan(ctx context.Context, uninstall bool) ([]File, error) {
	switch in.Scope {
	case "", ScopeLocal, ScopeProject, ScopeUser:
	default:
		return nil, errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"scope": in.Scope},
			"--scope is local, project or user")
	}
	k := Lookup(in.Harness)
	if k == nil || (k.Settings == nil && k.Plugin == nil) {
		return nil, errcode.Newf(errcode.InvalidParamsHarness, map[string]string{"harness": in.Harness},
			"%q is not a harness git-venom knows: %s", in.Harness, NameList())
	}
	if k.Plugin != nil {
		root, name := k.Plugin(kind.Scope{Name: in.scope(), Top: in.Top, Getenv: in.Getenv})
		f, err := in.pluginFile(k, place{root: root, name: name}, uninstall)
		if err != nil {
			return nil, err
		}
		return []File{f}, nil
	}
	if in.Harness != Codex {
		f, err := in.jsonFile(in.settings(k), uninstall)
		if err != nil {
			return nil, err
		}
		return []File{f}, nil
	}
	via := in.Via
	if via == "" || via == ViaAuto {
		via = ViaHooks
		if v, ok := installedCodex(ctx); ok && older(v, HooksSince) {
			via = ViaNotify
		}
	}
	if uninstall {
		via = ViaBoth // remove whatever is there, an older release's .codex/config.toml notify too
	} else if via != ViaHooks && in.Scope != ScopeUser {
		// Codex reads notify from the user's config.toml only, never from
		// a project's .codex/config.toml, even a trusted one (harness.md F2).
		return nil, errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"scope": in.scope(), "via": via},
			"Codex reads notify only from the user's config.toml (%s), for every project, never from .codex/config.toml",
			filepath.Join(in.codexHome(), "config.toml")).
			Hint("install notify there with --scope=user --via=notify, or use hooks in this repository: --via=hooks")
	}
	var out []File
	if via == ViaHooks || via == ViaBoth {
		f, err := in.jsonFile(in.settings(k), uninstall)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if via == ViaNotify || via == ViaBoth {
		f, err := in.notifyFile(in.codexFile("config.toml"), uninstall)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// scope is the scope's name, the default spelt out.
func (in Install) scope() string {
	if in.Scope == "" {
		return ScopeLocal
	}
	return in.Scope
}

// settings is the harness's hooks file of the scope (Kind.Settings).
func (in Install) settings(k *kind.Kind) place {
	root, name := k.Settings(kind.Scope{Name: in.scope(), Top: in.Top, Getenv: in.Getenv})
	return place{root: root, name: name}
}

// codexFile is one of Codex's files of the scope: in $CODEX_HOME
// (~/.codex) for the user, else in the repository's .codex.
func (in Install) codexFile(name string) place {
	if in.Scope == ScopeUser {
		return place{root: in.codexHome(), name: name}
	}
	return place{root: in.Top, name: ".codex/" + name}
}

// jsonFile merges git-venom's handlers into a hooks settings file (Claude
// Code's settings, Codex's hooks.json: {"hooks":{event:[{matcher?,
// hooks:[{type,command,timeout}]}]}}) as text (jsontext): only its own
// entries are inserted or removed, every other byte stays as it was, and
// uninstall after install gives back the file's exact bytes.
func (in Install) jsonFile(at place, uninstall bool) (File, error) {
	data, existed, mode, err := at.read()
	if err != nil {
		return File{}, err
	}
	f := File{Path: at.path(), Existed: existed, mode: mode, at: at, Content: data}
	if len(bytes.TrimSpace(data)) == 0 {
		if uninstall {
			return f, nil // nothing there, nothing to remove
		}
		root := ojson.NewObject()
		for _, m := range in.stamp() {
			root.Set(m.Key, m.Value)
		}
		root.Set("hooks", in.hooksObject())
		f.Content = append(ojson.Indent(root, "  "), '\n')
		f.Changed = true
		return f, nil
	}
	edit := in.installJSON
	if uninstall {
		edit = in.uninstallJSON
	}
	text, err := edit(data)
	if err != nil {
		var se *jsontext.SyntaxError
		if errors.As(err, &se) {
			return File{}, errcode.Newf(errcode.InvalidParamsConfig,
				map[string]string{"file": f.Path, "line": strconv.Itoa(se.Line), "column": strconv.Itoa(se.Col)},
				"%s is not valid JSON: %v", f.Path, err)
		}
		return File{}, errcode.Newf(errcode.InvalidParamsConfig, map[string]string{"file": f.Path}, "%s: %v", f.Path, err)
	}
	f.Content = text
	f.Changed = !bytes.Equal(data, text)
	if uninstall && f.Changed && in.bare(text) {
		f.Content = nil // only git-venom's hooks were there: install created it
	}
	return f, nil
}

// stamp is the harness's own members of a new settings file (Kind.SettingsStamp).
func (in Install) stamp() []kind.Member {
	if k := Lookup(in.Harness); k != nil {
		return k.SettingsStamp
	}
	return nil
}

// bare reports a settings file that holds nothing but what install puts
// in a file it creates, less the hooks: {} or the harness's stamp.
func (in Install) bare(text []byte) bool {
	if bytes.Equal(bytes.TrimSpace(text), []byte("{}")) {
		return true
	}
	stamp := in.stamp()
	if len(stamp) == 0 {
		return false
	}
	doc, err := in.parse(text)
	if err != nil || len(doc.Root.Members) != len(stamp) {
		return false
	}
	want := ojson.NewObject()
	for _, m := range stamp {
		want.Set(m.Key, m.Value)
	}
	got, err := doc.Decode(doc.Root)
	return err == nil && bytes.Equal(ojson.Compact(got), ojson.Compact(want))
}

// argv is the hook's command line as a plugin runs it (Command's words).
func (in Install) argv() []string {
	return strings.Fields(in.Command())
}

// pluginFile writes the harness's plugin whole (Kind.Plugin), or removes
// it: only a file that is git-venom's (Kind.PluginOurs), edited or not;
// another file under that name is refused by install and left by
// uninstall. Uninstall after install leaves the tree as it was: the file
// goes, and the folders install made for it when they are left empty.
func (in Install) pluginFile(k *kind.Kind, at place, uninstall bool) (File, error) {
	data, existed, mode, err := at.read()
	if err != nil {
		return File{}, err
	}
	f := File{Path: at.path(), Existed: existed, mode: mode, at: at, Content: data}
	ours := existed && k.PluginOurs(data)
	if existed && !ours {
		if uninstall {
			return f, nil
		}
		return File{}, errcode.Newf(errcode.ConflictHookInstalled, map[string]string{"file": f.Path},
			"%s exists and is not git-venom's plugin", f.Path).
			Hint("move it aside, then run hook install again")
	}
	if uninstall {
		if ours {
			f.Content, f.Changed = nil, true
		}
		return f, nil
	}
	text := k.PluginText(in.argv())
	f.Content, f.Changed = text, !bytes.Equal(data, text) || !existed
	return f, nil
}

// comments: the harness reads its settings as JSON with comments.
func (in Install) comments() bool {
	k := Lookup(in.Harness)
	return k != nil && k.SettingsComments
}

// parse reads a settings file, whose top level must be an object.
func (in Install) parse(text []byte) (*jsontext.Doc, error) {
	doc, err := jsontext.Parse(text, in.comments())
	if err != nil {
		return nil, err
	}
	if doc.Root.Kind != jsontext.Object {
		return nil, fmt.Errorf("the file is not a JSON object")
	}
	return doc, nil
}

// hooksObject is the "hooks" member install writes where there is none.
func (in Install) hooksObject() *ojson.Object {
	hooks := ojson.NewObject()
	for _, ev := range in.events() {
		hooks.Set(ev.Name, []any{in.group(ev)})
	}
	return hooks
}

// installJSON inserts git-venom's group into each event's list, in place
// of the handlers of git-venom's found there (an older install's), or
// last; an event already holding exactly that group is left alone.
func (in Install) installJSON(text []byte) ([]byte, error) {
	doc, err := in.parse(text)
	if err != nil {
		return nil, err
	}
	_, hooks := doc.Root.Member("hooks")
	if hooks == nil {
		return doc.InsertMember(doc.Root, "hooks", in.hooksObject()), nil
	}
	if hooks.Kind != jsontext.Object {
		return nil, fmt.Errorf(`"hooks" is not an object`)
	}
	for _, ev := range in.events() {
		if doc, err = in.parse(text); err != nil {
			return nil, err
		}
		_, hooks = doc.Root.Member("hooks")
		_, list := hooks.Member(ev.Name)
		switch {
		case list == nil:
			text = doc.InsertMember(hooks, ev.Name, []any{in.group(ev)})
			continue
		case list.Kind != jsontext.Array:
			return nil, fmt.Errorf(`"hooks"."%s" is not a list`, ev.Name)
		case in.holdsExactly(doc, list, ev):
			continue
		}
		at := -1
		for {
			gi, hi, whole := in.firstOurs(doc, list)
			if gi < 0 {
				break
			}
			if whole {
				if at < 0 {
					at = gi
				}
				text = doc.RemoveElem(list, gi)
			} else {
				_, handlers := list.Elems[gi].Member("hooks")
				text = doc.RemoveElem(handlers, hi)
			}
			if doc, err = in.parse(text); err != nil {
				return nil, err
			}
			_, hooks = doc.Root.Member("hooks")
			_, list = hooks.Member(ev.Name)
		}
		text = doc.InsertElem(list, at, in.group(ev))
	}
	return text, nil
}

// uninstallJSON removes git-venom's handlers, from every event: a group
// left with none is removed, and so is an event list this leaves empty.
// The "hooks" member this leaves empty goes too when it is the file's last
// member, where install puts the one it makes; one elsewhere was the
// person's (an empty "hooks": {} before the install) and stays. What was
// empty before the uninstall stays.
func (in Install) uninstallJSON(text []byte) ([]byte, error) {
	for {
		doc, err := in.parse(text)
		if err != nil {
			return nil, err
		}
		hi, hooks := doc.Root.Member("hooks")
		if hooks == nil || hooks.Kind != jsontext.Object {
			return text, nil
		}
		found := false
		for ei, m := range hooks.Members {
			list := m.Value
			if list.Kind != jsontext.Array {
				continue
			}
			gi, h, whole := in.firstOurs(doc, list)
			switch {
			case gi < 0:
				continue
			case !whole:
				_, handlers := list.Elems[gi].Member("hooks")
				text = doc.RemoveElem(handlers, h)
			case len(list.Elems) > 1:
				text = doc.RemoveElem(list, gi)
			case len(hooks.Members) > 1 || hi != len(doc.Root.Members)-1:
				text = doc.RemoveMember(hooks, ei)
			default:
				text = doc.RemoveMember(doc.Root, hi)
			}
			found = true
			break
		}
		if !found {
			return text, nil
		}
	}
}

// firstOurs finds the first group of an event's list holding a handler of
// git-venom's: its index, the handler's, and whether every handler of the
// group is git-venom's; gi -1 when there is none.
func (in Install) firstOurs(doc *jsontext.Doc, list *jsontext.Value) (gi, hi int, whole bool) {
	for gi, g := range list.Elems {
		if g.Kind != jsontext.Object {
			continue
		}
		_, handlers := g.Member("hooks")
		if handlers == nil || handlers.Kind != jsontext.Array {
			continue
		}
		first, n := -1, 0
		for hi, h := range handlers.Elems {
			if h.Kind != jsontext.Object {
				continue
			}
			if _, cmd := h.Member("command"); cmd != nil && in.ours(doc.String(cmd)) {
				if first < 0 {
					first = hi
				}
				n++
			}
		}
		if first >= 0 {
			return gi, first, n == len(handlers.Elems)
		}
	}
	return -1, -1, false
}

// holdsExactly: the event's list holds git-venom's group as install
// writes it, and no other handler of git-venom's.
func (in Install) holdsExactly(doc *jsontext.Doc, list *jsontext.Value, ev kind.Event) bool {
	want := string(ojson.Compact(in.group(ev)))
	matched := 0
	for _, g := range list.Elems {
		if gi, _, _ := in.firstOurs(doc, &jsontext.Value{Kind: jsontext.Array, Elems: []*jsontext.Value{g}}); gi < 0 {
			continue
		}
		v, err := doc.Decode(g)
		if err != nil || string(ojson.Compact(v)) != want {
			return false
		}
		matched++
	}
	return matched == 1
}

// group is git-venom's matcher group for an event.
func (in Install) group(ev kind.Event) *ojson.Object {
	h := ojson.NewObject()
	h.Set("type", "command")
	h.Set("command", in.Command())
	timeout := in.Timeout
	if k := Lookup(in.Harness); k != nil && (k.TimeoutMillis || k.TimeoutMillisFrom > 0 && timeout >= k.TimeoutMillisFrom) {
		timeout *= 1000
	}
	h.Set("timeout", timeout)
	g := ojson.NewObject()
	if ev.Matcher != "" {
		g.Set("matcher", ev.Matcher)
	}
	g.Set("hooks", []any{h})
	return g
}

// notifyLine is the config.toml line git-venom owns.
func (in Install) notifyLine() string {
	args := []string{"git", "venom-checkpoint", "hook", "codex"}
	if in.Agent != "" {
		args = append(args, "--agent="+in.Agent)
	}
	if in.Isolation != "" {
		args = append(args, "--isolation="+in.Isolation)
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return "notify = [" + strings.Join(q, ", ") + "]"
}

// Compiled on first use, not at every command's start.
var notifyKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*notify\s*=`) })

// notifyFile sets config.toml's top-level notify to git-venom's hook (Codex
// passes the turn's JSON as the last argument). Codex runs one notify
// program, so another one already there is refused, not replaced.
func (in Install) notifyFile(at place, uninstall bool) (File, error) {
	data, existed, mode, err := at.read()
	if err != nil {
		return File{}, err
	}
	path := at.path()
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	found := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			break // top-level keys end at the first table
		}
		if notifyKey().MatchString(l) {
			if !strings.Contains(l, `"venom-checkpoint"`) {
				if uninstall {
					return File{Path: path, Existed: existed, Content: data, mode: mode, at: at}, nil
				}
				return File{}, errcode.Newf(errcode.ConflictHookInstalled, map[string]string{"file": path, "notify": t},
					"%s already runs another notify program (%s); Codex runs only one", path, t).
					Hint("use hooks instead: --via=hooks")
			}
			found = i
			break
		}
	}
	if uninstall && found < 0 {
		// Nothing of git-venom's: the file stays as it is, or absent.
		return File{Path: path, Existed: existed, Content: data, mode: mode, at: at}, nil
	}
	line := in.notifyLine() + "\n"
	switch {
	case uninstall:
		lines = append(lines[:found], lines[found+1:]...)
	case found >= 0:
		lines[found] = line
	default:
		lines = append([]string{line}, lines...)
	}
	content := []byte(strings.Join(lines, ""))
	f := File{Path: path, Existed: existed, mode: mode, at: at, Content: content}
	if uninstall && len(content) == 0 {
		f.Content = nil
	}
	f.Changed = !existed && f.Content != nil || existed && !bytes.Equal(data, f.Content)
	return f, nil
}

// Apply writes the planned files, each beneath its root (settingsfile.go).
func Apply(files []File) error {
	for _, f := range files {
		if !f.Changed {
			continue
		}
		if f.Content == nil {
			if err := f.at.remove(); err != nil {
				return err
			}
			continue
		}
		if err := f.at.write(f.Content, f.mode); err != nil {
			return err
		}
	}
	return nil
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`) })

// installedCodex runs `codex --version` ("codex-cli 0.171.0").
func installedCodex(ctx context.Context) ([3]int, bool) {
	out, err := exec.CommandContext(ctx, "codex", "--version").Output()
	if err != nil {
		return [3]int{}, false
	}
	return ParseVersion(string(out))
}

// ParseVersion reads the first x.y.z of s.
func ParseVersion(s string) ([3]int, bool) {
	m := versionRE().FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

func older(v, than [3]int) bool {
	for i := range v {
		if v[i] != than[i] {
			return v[i] < than[i]
		}
	}
	return false
}
