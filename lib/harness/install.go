package harness

import (
	"bytes"
	"context"
	"sync"

	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
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
}

// File is one settings file as install or uninstall leaves it.
type File struct {
	Path    string `json:"file"`
	Changed bool   `json:"changed"`
	Content []byte `json:"-"` // nil: the file is removed (uninstall of a file install created)
	Existed bool   `json:"-"`
	mode    os.FileMode
	at      place
}

// Command is the hook's command line.
func (in Install) Command() string {
	cmd := "git venom-checkpoint hook " + in.Harness
	if in.Agent != "" {
		cmd += " --agent=" + in.Agent
	}
	if in.Isolation != "" {
		cmd += " --isolation=" + in.Isolation
	}
	return cmd
}

// ours: the prefix every command git-venom installs starts with.
func (in Install) ours(cmd string) bool {
	base := "git venom-checkpoint hook " + in.Harness
	return cmd == base || strings.HasPrefix(cmd, base+" ")
}

// events are the hook events installed for the harness (Kind.Events).
// SessionEnd and Codex's Interrupt are left out: their hooks are cut after
// 1.5 s and 3 s, or not awaited, too short for a capture, and the next
// prompt ends an interrupted turn anyway.
func (in Install) events() []kind.Event {
	if k := Lookup(in.Harness); k != nil {
		return k.Events
	}
	return nil
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
	if k == nil || k.Settings == nil {
		return nil, errcode.Newf(errcode.InvalidParamsHarness, map[string]string{"harness": in.Harness},
			"%q is not a harness git-venom knows: %s", in.Harness, NameList())
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
// hooks:[{type,command,timeout}]}]}}), keeping every other member, group
// and handler, and the file's key order and indentation.
func (in Install) jsonFile(at place, uninstall bool) (File, error) {
	data, existed, mode, err := at.read()
	if err != nil {
		return File{}, err
	}
	path := at.path()
	root := ojson.NewObject()
	if len(bytes.TrimSpace(data)) > 0 {
		if root, err = ojson.ParseObject(data); err != nil {
			return File{}, errcode.Newf(errcode.InvalidParamsConfig, map[string]string{"file": path},
				"%s is not a JSON object: %v", path, err)
		}
	}
	hooks, _ := getObject(root, "hooks")
	if hooks == nil {
		if v, ok := root.Get("hooks"); ok && v != nil {
			return File{}, errcode.Newf(errcode.InvalidParamsConfig, map[string]string{"file": path},
				"%s: \"hooks\" is not an object", path)
		}
		hooks = ojson.NewObject()
	}
	for _, ev := range in.events() {
		groups, _ := getList(hooks, ev.Name)
		groups, at := in.without(groups)
		if !uninstall {
			g := in.group(ev)
			if at < 0 || at > len(groups) {
				groups = append(groups, g)
			} else {
				groups = append(groups[:at], append([]any{g}, groups[at:]...)...)
			}
		}
		_, had := hooks.Get(ev.Name)
		switch {
		case len(groups) > 0:
			hooks.Set(ev.Name, groups)
		case had:
			hooks.Delete(ev.Name)
		}
	}
	if hooks.Len() > 0 {
		root.Set("hooks", hooks)
	} else {
		root.Delete("hooks")
	}
	indent := "  "
	if existed {
		indent = ojson.DetectIndent(data)
	}
	content := ojson.Indent(root, indent)
	if !existed || bytes.HasSuffix(data, []byte("\n")) {
		content = append(content, '\n')
	}
	f := File{Path: path, Existed: existed, mode: mode, at: at, Content: content}
	if uninstall && root.Len() == 0 && existed && !bytes.Equal(bytes.TrimSpace(data), []byte("{}")) {
		f.Content = nil // install created it: remove it
	}
	f.Changed = !existed && f.Content != nil || existed && !bytes.Equal(data, f.Content)
	return f, nil
}

// group is git-venom's matcher group for an event.
func (in Install) group(ev kind.Event) *ojson.Object {
	h := ojson.NewObject()
	h.Set("type", "command")
	h.Set("command", in.Command())
	timeout := in.Timeout
	if k := Lookup(in.Harness); k != nil && k.TimeoutMillis {
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

// without removes git-venom's handlers from an event's groups, and groups
// left empty by that, and returns where the first such group was (-1).
func (in Install) without(groups []any) ([]any, int) {
	at := -1
	var out []any
	for _, g := range groups {
		obj, ok := g.(*ojson.Object)
		if !ok {
			out = append(out, g)
			continue
		}
		list, _ := getList(obj, "hooks")
		var kept []any
		for _, h := range list {
			if ho, ok := h.(*ojson.Object); ok && in.ours(ho.String("command")) {
				continue
			}
			kept = append(kept, h)
		}
		if len(kept) == len(list) {
			out = append(out, g)
			continue
		}
		if len(kept) == 0 {
			if at < 0 {
				at = len(out)
			}
			continue
		}
		c := obj.Clone()
		c.Set("hooks", kept)
		out = append(out, c)
	}
	return out, at
}

func getObject(o *ojson.Object, k string) (*ojson.Object, bool) {
	v, _ := o.Get(k)
	obj, ok := v.(*ojson.Object)
	return obj, ok
}

func getList(o *ojson.Object, k string) ([]any, bool) {
	v, _ := o.Get(k)
	l, ok := v.([]any)
	return l, ok
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
	line := in.notifyLine() + "\n"
	switch {
	case uninstall && found >= 0:
		lines = append(lines[:found], lines[found+1:]...)
	case uninstall:
	case found >= 0:
		lines[found] = line
	default:
		lines = append([]string{line}, lines...)
	}
	content := []byte(strings.Join(lines, ""))
	f := File{Path: path, Existed: existed, mode: mode, at: at, Content: content}
	if uninstall && existed && len(content) == 0 && found >= 0 {
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
