package codex

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/quote"
)

// Codex's part of hook install (kind.Installer): how it calls the hook
// (hooks.json, or config.toml's notify program for older releases), and
// its trust in the hooks install writes, which Codex needs before it runs
// any of them.

// Ways Codex can call the hook (docs/harness.md#hook-agents): install's --via.
const (
	ViaAuto   = "auto"   // hooks when the installed Codex is one known to have them, notify otherwise
	ViaHooks  = "hooks"  // hooks.json
	ViaNotify = "notify" // config.toml's notify program
	ViaBoth   = "both"
)

// HooksSince is the oldest Codex whose hooks git-venom has seen work
// (tests/testdata/hooks/codex); "auto" uses notify for older ones.
var HooksSince = [3]int{0, 171, 0}

// ErrNoCodex: the codex program is not on PATH.
var ErrNoCodex = errors.New("codex is not on PATH")

type installer struct{}

// Plan picks hooks.json, notify or both (uninstall: both, to remove
// whatever is there, an older release's .codex/config.toml notify too).
func (installer) Plan(ctx context.Context, s kind.Setup) (bool, []kind.Edit, error) {
	via := s.Via
	if via == "" || via == ViaAuto {
		via = ViaHooks
		if v, ok := installedVersion(ctx); ok && older(v, HooksSince) {
			via = ViaNotify
		}
	}
	if s.Uninstall {
		via = ViaBoth
	} else if via != ViaHooks && s.Scope.Name != "user" {
		// Codex reads notify from the user's config.toml only, never from
		// a project's .codex/config.toml, even a trusted one.
		return false, nil, errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"scope": s.Scope.Name, "via": via},
			"Codex reads notify only from the user's config.toml (%s), for every project, never from .codex/config.toml",
			filepath.Join(Home(s.Scope.Getenv), "config.toml")).
			Hint("install notify there with --scope=user --via=notify, or use hooks in this repository: --via=hooks")
	}
	var edits []kind.Edit
	if via == ViaNotify || via == ViaBoth {
		root, name := configFile(s.Scope)
		path := filepath.Join(root, filepath.FromSlash(name))
		edits = append(edits, kind.Edit{Root: root, Name: name, Edit: func(data []byte) ([]byte, error) {
			return editNotify(data, path, notifyLine(s), s.Uninstall)
		}})
	}
	return via == ViaHooks || via == ViaBoth, edits, nil
}

// configFile is Codex's config.toml of the scope: in $CODEX_HOME
// (~/.codex) for the user, else in the repository's .codex.
func configFile(s kind.Scope) (root, name string) {
	if s.Name == "user" {
		return Home(s.Getenv), "config.toml"
	}
	return s.Top, ".codex/config.toml"
}

// notifyLine is the config.toml line git-venom owns.
func notifyLine(s kind.Setup) string {
	args := []string{"git", "venom-checkpoint", "hook", name}
	if s.Agent != "" {
		args = append(args, "--agent="+s.Agent)
	}
	if s.Isolation != "" {
		args = append(args, "--isolation="+s.Isolation)
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return "notify = [" + strings.Join(q, ", ") + "]"
}

// Compiled on first use, not at every command's start.
var notifyKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*notify\s*=`) })

// editNotify sets config.toml's top-level notify to git-venom's hook
// (Codex passes the turn's JSON as the last argument), or removes it. Codex
// runs one notify program, so another one already there is refused, not
// replaced, and left by uninstall.
func editNotify(data []byte, path, notify string, uninstall bool) ([]byte, error) {
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
					return data, nil
				}
				return nil, errcode.Newf(errcode.ConflictHookInstalled, map[string]string{"file": path, "notify": t},
					"%s already runs another notify program (%s); Codex runs only one", path, t).
					Hint("use hooks instead: --via=hooks")
			}
			found = i
			break
		}
	}
	if uninstall && found < 0 {
		return data, nil // nothing of git-venom's: the file stays as it is, or absent
	}
	line := notify + "\n"
	switch {
	case uninstall:
		lines = append(lines[:found], lines[found+1:]...)
	case found >= 0:
		lines[found] = line
	default:
		lines = append([]string{line}, lines...)
	}
	content := []byte(strings.Join(lines, ""))
	if uninstall && len(content) == 0 {
		return nil, nil
	}
	return content, nil
}

var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`) })

// installedVersion runs `codex --version` ("codex-cli 0.171.0").
func installedVersion(ctx context.Context) ([3]int, bool) {
	out, err := exec.CommandContext(ctx, Binary, "--version").Output()
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

// InstallTrust is what install did about Codex's hook trust (trust.go):
// Codex runs a hook only when its definition is trusted, in a trusted
// project. It is install's --json codex_trust.
type InstallTrust struct {
	// Config is the user's config.toml, where Codex records trust.
	Config string `json:"config"`
	// Hooks are the keys of the hooks install trusted, as Codex names them.
	Hooks   []string `json:"hooks"`
	Changed bool     `json:"changed"`
	// ProjectTrusted: Codex will run them here now. When false, Step is
	// what the person must do first.
	ProjectTrusted bool   `json:"project_trusted"`
	Step           string `json:"step,omitempty"`
}

// ours selects the hooks install wrote into the hooks file at path.
func ours(path string) func(Hook) bool {
	return func(h Hook) bool { return h.SourcePath == path && kind.IsHookCommand(name, h.Command) }
}

// ProjectStep is the one step that makes Codex trust the repository top.
func ProjectStep(top string, getenv func(string) string) string {
	return "start codex in " + top + " once and trust the folder, or add [projects." + strconv.Quote(top) +
		"] trust_level = \"trusted\" to " + filepath.Join(Home(getenv), "config.toml")
}

// Note: a dry run cannot ask Codex about hooks not written yet, so it
// says what the real install records.
func (installer) Note(s kind.Setup) string {
	if s.Uninstall || !s.HooksChanged {
		return ""
	}
	return "Codex runs no hook it does not trust: the real install also records Codex's trust in " +
		"exactly these hooks in " + filepath.Join(Home(s.Scope.Getenv), "config.toml") +
		", and Codex runs a project's hooks only once it trusts the project (" + ProjectStep(s.Scope.Top, s.Scope.Getenv) + ")"
}

// Begin: install records Codex's trust in exactly the hooks it wrote
// (running install is the person's consent to those hooks, and to nothing
// else: a project Codex does not trust stays untrusted); uninstall reads
// the hooks' keys and hashes before they go, to take that trust back after.
// A failure leaves the files written and says what to do.
func (installer) Begin(ctx context.Context, s kind.Setup) func(context.Context) kind.Done {
	if s.Hooks == "" {
		return nil
	}
	env := gitcli.CleanEnv(s.Environ)
	config := filepath.Join(Home(s.Scope.Getenv), "config.toml")
	if !s.Uninstall {
		return func(ctx context.Context) kind.Done {
			t, err := trustInstalled(ctx, s, env, config)
			if err != nil {
				// The hooks are written; Codex runs none of them until trusted.
				return kind.Done{Warning: fmt.Sprintf("Codex runs no hook it does not trust, and could not be asked "+
					"to trust these (%v): run this command again once codex runs here, or trust them in codex's /hooks", err)}
			}
			return trustDone(t, false)
		}
	}
	if !s.HooksChanged {
		return nil
	}
	if _, err := exec.LookPath(Binary); err != nil {
		return nil // no codex here to ask, and none to have recorded trust
	}
	hooks, err := Ours(ctx, Binary, s.Scope.Top, env, ours(s.Hooks))
	return func(ctx context.Context) kind.Done {
		var removed []string
		if err == nil {
			removed, err = Untrust(ctx, Binary, s.Scope.Top, env, hooks)
		}
		if err != nil {
			return kind.Done{Warning: fmt.Sprintf("the hooks are removed, but Codex's trust in them could not be (%v): "+
				"their [hooks.state] entries stay in Codex's config.toml, where they do nothing", err)}
		}
		if len(hooks) == 0 {
			return kind.Done{}
		}
		return trustDone(&InstallTrust{Config: config, Hooks: append([]string{}, removed...), Changed: len(removed) > 0}, true)
	}
}

// trustInstalled asks the installed Codex for the keys and hashes of the
// hooks install wrote, and records its trust in them.
func trustInstalled(ctx context.Context, s kind.Setup, env []string, config string) (*InstallTrust, error) {
	if _, err := exec.LookPath(Binary); err != nil {
		return nil, ErrNoCodex
	}
	res, err := Trust(ctx, Binary, s.Scope.Top, env, ours(s.Hooks))
	if err != nil {
		return nil, err
	}
	t := &InstallTrust{Config: config, Hooks: []string{}, Changed: res.Changed, ProjectTrusted: res.ProjectTrusted}
	for _, h := range res.Hooks {
		t.Hooks = append(t.Hooks, h.Key)
	}
	if !t.ProjectTrusted {
		t.Step = ProjectStep(s.Scope.Top, s.Scope.Getenv)
	}
	return t, nil
}

// trustDone says what install or uninstall did to Codex's trust.
func trustDone(t *InstallTrust, uninstall bool) kind.Done {
	d := kind.Done{Key: "codex_trust", Value: t}
	switch {
	case uninstall && t.Changed:
		d.Said = append(d.Said, fmt.Sprintf("Removed Codex's trust in these %d hooks, which install had recorded, from %s.",
			len(t.Hooks), quote.C(t.Config)))
	case uninstall:
	case t.Changed:
		d.Said = append(d.Said, fmt.Sprintf("Recorded Codex's trust in these %d hooks, and no other, in %s.",
			len(t.Hooks), quote.C(t.Config)))
	}
	if !uninstall && !t.ProjectTrusted {
		d.Warned = append(d.Warned, "warning: Codex does not trust this project, and runs none of its hooks until it does: "+
			quote.Text(t.Step))
	}
	return d
}
