package codex

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// CheckID is doctor's check of git-venom's Codex hooks.
const CheckID = "harness.codex.hooks"

func checks(ctx context.Context, in kind.Doctor) []kind.Finding {
	f := checkHooks(ctx, in)
	f.ID = CheckID
	return []kind.Finding{f}
}

// checkHooks says whether Codex will run the git-venom hooks found in the
// repository's and the user's hooks.json, asking `codex app-server`
// (hooks/list) with the user's configuration: an untrusted or modified
// hook, or an untrusted project, is a warning whose fix is the install
// command that trusts exactly those hooks, or the project's step.
func checkHooks(ctx context.Context, in kind.Doctor) kind.Finding {
	installed := map[string]string{} // hooks.json path -> the scope's flag
	for _, f := range []struct {
		root, name, flag string
	}{{in.Top, ".codex/hooks.json", ""}, {Home(in.Getenv), "hooks.json", " --scope=user"}} {
		if in.Top == "" && f.flag == "" {
			continue
		}
		data, err := in.ReadSettings(f.root, f.name)
		if err == nil && bytes.Contains(data, []byte(kind.HookCommand(name))) {
			installed[filepath.Join(f.root, filepath.FromSlash(f.name))] = f.flag
		}
	}
	if len(installed) == 0 {
		return kind.Finding{Status: "ok", Message: "no git-venom hook in Codex's hooks.json"}
	}
	if _, err := exec.LookPath(Binary); err != nil {
		return kind.Finding{Status: "warn", Message: "git-venom's Codex hooks are installed, but codex is not on PATH",
			Fix: "install Codex, then run git venom-checkpoint hook install codex, which records Codex's trust in them"}
	}
	listed, err := Hooks(ctx, Binary, in.Top, gitcli.CleanEnv(in.Environ))
	if err != nil {
		return kind.Finding{Status: "warn", Message: fmt.Sprintf("codex app-server cannot list the hooks: %v", err),
			Fix: "run codex app-server's hooks/list by hand (or codex's /hooks) to see why"}
	}
	var bad []string
	var fixes []string
	seen := map[string]bool{}
	for _, h := range listed {
		flag, ok := installed[h.SourcePath]
		if !ok || !kind.IsHookCommand(name, h.Command) {
			continue
		}
		seen[h.SourcePath] = true
		if h.TrustStatus == Trusted || h.TrustStatus == "managed" {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s is %s", h.Key, h.TrustStatus))
		// The install that wrote the hook, run again, trusts it again.
		if fix := strings.Replace(h.Command, " hook codex", " hook install codex", 1) + flag; !slices.Contains(fixes, fix) {
			fixes = append(fixes, fix)
		}
	}
	if len(bad) > 0 {
		return kind.Finding{Status: "warn", Fix: strings.Join(fixes, "; "), Message: fmt.Sprintf(
			"Codex skips git-venom hooks it does not trust (%s): no turn checkpoint is taken", strings.Join(bad, ", "))}
	}
	for path, flag := range installed {
		if !seen[path] && flag == "" {
			return kind.Finding{Status: "warn", Fix: ProjectStep(in.Top, in.Getenv), Message: fmt.Sprintf(
				"Codex does not trust %s, so it runs none of its hooks (%s): no turn checkpoint is taken", in.Top, path)}
		}
	}
	return kind.Finding{Status: "ok", Message: "Codex trusts and runs git-venom's hooks"}
}
