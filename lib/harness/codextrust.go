package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/codex"
)

// CodexTrust is what install did about Codex's hook trust (codex/trust.go):
// Codex runs a hook only when its definition is trusted, in a trusted
// project.
type CodexTrust struct {
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

// ErrNoCodex: the codex program is not on PATH.
var ErrNoCodex = errors.New("codex is not on PATH")

// codexHome is the user's Codex folder: $CODEX_HOME, else ~/.codex.
func (in Install) codexHome() string { return codex.Home(in.Getenv) }

// TrustCodex records the trust of exactly the hooks install wrote into
// hooks (the hooks.json file), asking the installed Codex for their keys
// and hashes (env: the environment codex runs with). Running install is
// the person's consent to those hooks, and to nothing else: a project
// Codex does not trust stays untrusted, and Step says how to trust it.
func (in Install) TrustCodex(ctx context.Context, env []string, hooks File) (*CodexTrust, error) {
	if _, err := exec.LookPath(codex.Binary); err != nil {
		return nil, ErrNoCodex
	}
	res, err := codex.Trust(ctx, codex.Binary, in.Top, env, func(h codex.Hook) bool {
		return h.SourcePath == hooks.Path && in.ours(h.Command)
	})
	if err != nil {
		return nil, err
	}
	t := &CodexTrust{Config: filepath.Join(in.codexHome(), "config.toml"), Hooks: []string{},
		Changed: res.Changed, ProjectTrusted: res.ProjectTrusted}
	for _, h := range res.Hooks {
		t.Hooks = append(t.Hooks, h.Key)
	}
	if !t.ProjectTrusted {
		t.Step = in.TrustProjectStep()
	}
	return t, nil
}

// CodexHooks are the hooks install wrote into hooks (the hooks.json file)
// as the installed Codex computes them, read before uninstall removes
// them: UntrustCodex needs their keys and hashes.
func (in Install) CodexHooks(ctx context.Context, env []string, hooks File) ([]codex.Hook, error) {
	if _, err := exec.LookPath(codex.Binary); err != nil {
		return nil, ErrNoCodex
	}
	return codex.Ours(ctx, codex.Binary, in.Top, env, func(h codex.Hook) bool {
		return h.SourcePath == hooks.Path && in.ours(h.Command)
	})
}

// UntrustCodex removes the trust TrustCodex recorded for hooks (from
// CodexHooks, before uninstall): uninstall takes away what install added
// to the user's config.toml, and nothing the person wrote there.
func (in Install) UntrustCodex(ctx context.Context, env []string, hooks []codex.Hook) (*CodexTrust, error) {
	removed, err := codex.Untrust(ctx, codex.Binary, in.Top, env, hooks)
	if err != nil {
		return nil, err
	}
	return &CodexTrust{Config: filepath.Join(in.codexHome(), "config.toml"), Hooks: append([]string{}, removed...),
		Changed: len(removed) > 0}, nil
}

// TrustProjectStep is the one step that makes Codex trust the repository.
func (in Install) TrustProjectStep() string {
	return "start codex in " + in.Top + " once and trust the folder, or add [projects." + strconv.Quote(in.Top) +
		"] trust_level = \"trusted\" to " + filepath.Join(in.codexHome(), "config.toml")
}

// CodexCheck is doctor's view of git-venom's Codex hooks.
type CodexCheck struct {
	Status  string // "ok" or "warn"
	Message string
	Fix     string
}

// CheckCodexHooks says whether Codex will run the git-venom hooks found in
// the repository's and the user's hooks.json, asking `codex app-server`
// (hooks/list) with the user's configuration (env): an untrusted or
// modified hook, or an untrusted project, is a warning whose fix is the
// install command that trusts exactly those hooks, or the project's step.
func (in Install) CheckCodexHooks(ctx context.Context, env []string) CodexCheck {
	in.Harness = Codex
	installed := map[string]string{} // hooks.json path -> the scope's flag
	for _, f := range []struct {
		at   place
		flag string
	}{{place{root: in.Top, name: ".codex/hooks.json"}, ""}, {place{root: in.codexHome(), name: "hooks.json"}, " --scope=user"}} {
		if in.Top == "" && f.flag == "" {
			continue
		}
		data, _, _, err := f.at.read()
		if err == nil && bytes.Contains(data, []byte("git venom-checkpoint hook codex")) {
			installed[f.at.path()] = f.flag
		}
	}
	if len(installed) == 0 {
		return CodexCheck{Status: "ok", Message: "no git-venom hook in Codex's hooks.json"}
	}
	if _, err := exec.LookPath(codex.Binary); err != nil {
		return CodexCheck{Status: "warn", Message: "git-venom's Codex hooks are installed, but codex is not on PATH",
			Fix: "install Codex, then run git venom-checkpoint hook install codex, which records Codex's trust in them"}
	}
	listed, err := codex.Hooks(ctx, codex.Binary, in.Top, env)
	if err != nil {
		return CodexCheck{Status: "warn", Message: fmt.Sprintf("codex app-server cannot list the hooks: %v", err),
			Fix: "run codex app-server's hooks/list by hand (or codex's /hooks) to see why"}
	}
	var bad []string
	var fixes []string
	seen := map[string]bool{}
	for _, h := range listed {
		flag, ok := installed[h.SourcePath]
		if !ok || !in.ours(h.Command) {
			continue
		}
		seen[h.SourcePath] = true
		if h.TrustStatus == codex.Trusted || h.TrustStatus == "managed" {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s is %s", h.Key, h.TrustStatus))
		// The install that wrote the hook, run again, trusts it again.
		if fix := strings.Replace(h.Command, " hook codex", " hook install codex", 1) + flag; !slices.Contains(fixes, fix) {
			fixes = append(fixes, fix)
		}
	}
	if len(bad) > 0 {
		return CodexCheck{Status: "warn", Fix: strings.Join(fixes, "; "), Message: fmt.Sprintf(
			"Codex skips git-venom hooks it does not trust (%s): no turn checkpoint is taken", strings.Join(bad, ", "))}
	}
	for path, flag := range installed {
		if !seen[path] && flag == "" {
			return CodexCheck{Status: "warn", Fix: in.TrustProjectStep(), Message: fmt.Sprintf(
				"Codex does not trust %s, so it runs none of its hooks (%s): no turn checkpoint is taken", in.Top, path)}
		}
	}
	return CodexCheck{Status: "ok", Message: "Codex trusts and runs git-venom's hooks"}
}
