package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
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

// Install describes hook install or uninstall.
type Install struct {
	Harness   string
	Agent     string // only written into the command when given
	Isolation string
	Scope     string
	Via       string // how the harness calls the hook, where it has a choice (kind.Setup)
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
		return nil, Unknown(in.Harness)
	}
	if k.Plugin != nil {
		root, name := k.Plugin(kind.Scope{Name: in.scope(), Top: in.Top, Getenv: in.Getenv})
		f, err := in.pluginFile(k, place{root: root, name: name}, uninstall)
		if err != nil {
			return nil, err
		}
		return []File{f}, nil
	}
	hooks, edits := true, []kind.Edit(nil)
	if k.Install != nil {
		var err error
		if hooks, edits, err = k.Install.Plan(ctx, in.setup(uninstall)); err != nil {
			return nil, err
		}
	}
	var out []File
	if hooks {
		f, err := in.jsonFile(in.settings(k), uninstall)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	for _, e := range edits {
		f, err := editFile(place{root: e.Root, name: e.Name}, e.Edit)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// setup is the install as a harness's own steps see it (kind.Installer).
func (in Install) setup(uninstall bool) kind.Setup {
	return kind.Setup{Scope: kind.Scope{Name: in.scope(), Top: in.Top, Getenv: in.Getenv},
		Agent: in.Agent, Isolation: in.Isolation, Via: in.Via, Uninstall: uninstall}
}

// Setup is the planned install or uninstall (files, from Plan) as the
// harness's own steps see it, for its Installer's Note and Begin; environ
// is the environment the harness's program runs with.
func (in Install) Setup(files []File, uninstall bool, environ []string) kind.Setup {
	s := in.setup(uninstall)
	s.Environ = environ
	k := Lookup(in.Harness)
	if k == nil || k.Settings == nil {
		return s
	}
	hooks := in.settings(k).path()
	for _, f := range files {
		if f.Path == hooks {
			s.Hooks, s.HooksChanged = f.Path, f.Changed
			break
		}
	}
	return s
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

// editFile is a file a harness's install edits as text (kind.Edit):
// changed when edit gives other bytes than the file's, removed when it
// gives none for a file that exists.
func editFile(at place, edit func([]byte) ([]byte, error)) (File, error) {
	data, existed, mode, err := at.read()
	if err != nil {
		return File{}, err
	}
	content, err := edit(data)
	if err != nil {
		return File{}, err
	}
	f := File{Path: at.path(), Existed: existed, mode: mode, at: at, Content: content}
	f.Changed = !existed && content != nil || existed && !bytes.Equal(data, content)
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
