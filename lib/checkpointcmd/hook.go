package checkpointcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/harness"
	_ "github.com/git-venom/git-venom/lib/harness/claude" // registers the rewind adapters
	_ "github.com/git-venom/git-venom/lib/harness/codex"
	"github.com/git-venom/git-venom/lib/harnessproc"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/quote"
)

// HookCmd runs as a harness hook, or installs the hooks (CONTRACT §6).
type HookCmd struct {
	ClaudeCode HookClaudeCmd    `cmd:"" name:"claude-code" help:"Run as a Claude Code hook: the event's JSON on stdin."`
	Codex      HookCodexCmd     `cmd:"" name:"codex" help:"Run as a Codex hook (JSON on stdin) or notify program (JSON as the last argument)."`
	Install    HookInstallCmd   `cmd:"" help:"Merge git-venom's hook entries into the harness's settings."`
	Uninstall  HookUninstallCmd `cmd:"" help:"Remove exactly the entries hook install added."`
}

// hookFlags name the agent the hook captures for (CONTRACT 8.1, 8.13).
type hookFlags struct {
	Agent     string `name:"agent" help:"The agent (default: VENOM_AGENT, else one per harness session: claude or codex, or claude-<8 of the session id> beside another live session)."`
	Isolation string `name:"isolation" enum:",in_place,worktree,copy" default:"" help:"How the agent's tree is isolated, fixed at registration."`
	Parent    string `name:"parent" help:"The agent's parent, fixed at registration."`
}

// HookClaudeCmd is Claude Code's hook.
type HookClaudeCmd struct {
	hookFlags `embed:""`
}

// Run handles one event.
func (c *HookClaudeCmd) Run(env *cli.Env) error {
	return runHook(env, harness.ClaudeCode, c.hookFlags, "")
}

// HookCodexCmd is Codex's hook and notify program.
type HookCodexCmd struct {
	hookFlags `embed:""`
	Notify    string `arg:"" optional:"" name:"json" help:"notify's agent-turn-complete JSON (Codex appends it)."`
}

// Run handles one event.
func (c *HookCodexCmd) Run(env *cli.Env) error {
	return runHook(env, harness.Codex, c.hookFlags, c.Notify)
}

// runHook never fails the harness: every problem is one line on stderr,
// and the exit status is 0 (CONTRACT §6). It runs within venom.timeout from
// its start (hookdeadline.go).
func runHook(env *cli.Env, name string, f hookFlags, notify string) error {
	d := startHookDeadline(env)
	defer d.end()
	h := harness.Hook{Harness: name, Agent: f.Agent, Isolation: f.Isolation, Parent: f.Parent, Dir: env.Dir,
		Note: func(err error) { hookWarn(env, err) }}
	if h.Agent == "" {
		h.Agent = env.Getenv("VENOM_AGENT")
	}
	// Left empty, the agent is the session's default (harness.DefaultAgent).
	h.Process = journal.ProcessOf(harnessproc.Harness(env.Getenv))
	var p *harness.Payload
	var perr error
	if notify != "" {
		p, perr = harness.ParseNotify(notify)
	} else {
		p, perr = harness.ReadHook(env.UI.In)
	}
	if p != nil && p.Cwd != "" {
		if fi, err := os.Stat(p.Cwd); err == nil && fi.IsDir() {
			env.Dir = p.Cwd
			h.Dir = p.Cwd
		}
	}
	s, err := env.Store()
	if err != nil {
		hookWarn(env, err)
		return nil
	}
	d.set(env, s.Config.Timeout)
	if perr != nil {
		_ = h.LogBroken(env.Ctx, s, perr)
		hookWarn(env, errcode.Newf(errcode.InvalidParamsHookInput, nil, "%v", perr))
		return nil
	}
	out, err := h.Handle(env.Ctx, s, p)
	if len(out) > 0 {
		_, _ = env.UI.Out.Write(out)
	}
	if err != nil {
		hookWarn(env, d.explain(err))
	}
	return nil
}

func hookWarn(env *cli.Env, err error) {
	e := errcode.From(err, errcode.FailedInternal)
	fmt.Fprintf(env.UI.Err, "git-venom hook: %s: %s\n", e.Code, quote.Text(strings.ReplaceAll(e.Message, "\n", " ")))
}

// installFlags are hook install's and uninstall's.
type installFlags struct {
	Harness   string `arg:"" enum:"claude-code,codex" help:"claude-code or codex."`
	Agent     string `name:"agent" help:"Put --agent=A in the hook command (default: the hook's own default)."`
	Isolation string `name:"isolation" enum:",in_place,worktree,copy" default:"" help:"Put --isolation=I in the hook command."`
	Scope     string `name:"scope" enum:"local,project,user" default:"local" help:"local: .claude/settings.local.json or .codex/; project: .claude/settings.json; user: ~/.claude/settings.json or $CODEX_HOME."`
	Via       string `name:"via" enum:"auto,hooks,notify,both" default:"auto" help:"Codex: hooks.json, config.toml's notify, or both; auto picks hooks when the installed Codex has them."`
	DryRun    bool   `name:"dry-run" help:"Print the resulting file and write nothing."`
}

// HookInstallCmd installs the hooks.
type HookInstallCmd struct {
	installFlags `embed:""`
}

// Run installs.
func (c *HookInstallCmd) Run(env *cli.Env) error { return runInstall(env, c.installFlags, false) }

// HookUninstallCmd removes them.
type HookUninstallCmd struct {
	installFlags `embed:""`
}

// Run uninstalls.
func (c *HookUninstallCmd) Run(env *cli.Env) error { return runInstall(env, c.installFlags, true) }

func runInstall(env *cli.Env, f installFlags, uninstall bool) error {
	in := harness.Install{Harness: f.Harness, Agent: f.Agent, Isolation: f.Isolation, Scope: f.Scope, Via: f.Via,
		Getenv: env.Getenv}
	s, err := env.Store()
	if err != nil {
		if f.Scope != harness.ScopeUser {
			return err
		}
	} else {
		in.Top = s.Repo.Top
		in.Timeout = int(s.Config.Timeout.Seconds()) + 10
	}
	if in.Timeout == 0 {
		in.Timeout = 40
	}
	files, err := in.Plan(env.Ctx, uninstall)
	if err != nil {
		return err
	}
	if f.DryRun {
		if env.JSON {
			return env.UI.JSON(installResult(f, files, true))
		}
		for _, file := range files {
			if len(files) > 1 {
				env.UI.Printf("==> %s <==\n", quote.C(file.Path))
			}
			_, _ = env.UI.Out.Write(file.Content)
		}
		return nil
	}
	if err := harness.Apply(files); err != nil {
		return err
	}
	trust, trustErr := codexTrust(env, in, files, uninstall)
	if env.JSON {
		res := installResult(f, files, false)
		res.CodexTrust = trust
		if trustErr != nil {
			res.Warning = trustErr.Error()
		}
		return env.UI.JSON(res)
	}
	bold := env.UI.OutStyle(color.Bold)
	for _, file := range files {
		path := quote.C(file.Path) // the repository's folder may be named anything
		switch {
		case !file.Changed:
			env.UI.Printf("%s is already as it should be.\n", path)
		case uninstall && file.Content == nil:
			env.UI.Printf("Removed %s: git-venom had created it.\n", bold(path))
		case uninstall:
			env.UI.Printf("Removed git-venom's %s hooks from %s.\n", f.Harness, bold(path))
		default:
			env.UI.Printf("Installed git-venom's %s hooks in %s.\n", f.Harness, bold(path))
		}
	}
	printCodexTrust(env, trust, trustErr)
	return nil
}

// codexTrust makes Codex trust the hooks install has just written
// (harness.TrustCodex); nil when no hooks.json was written. A failure
// leaves the installed files and is reported with the step to take.
func codexTrust(env *cli.Env, in harness.Install, files []harness.File, uninstall bool) (*harness.CodexTrust, error) {
	if uninstall || in.Harness != harness.Codex {
		return nil, nil
	}
	for _, file := range files {
		if filepath.Base(file.Path) != "hooks.json" {
			continue
		}
		t, err := in.TrustCodex(env.Ctx, gitcli.CleanEnv(env.Environ), file)
		if err != nil {
			// The hooks are written; Codex runs none of them until trusted.
			return nil, fmt.Errorf("Codex runs no hook it does not trust, and could not be asked to trust these (%v): "+
				"run this command again once codex runs here, or trust them in codex's /hooks", err)
		}
		return t, nil
	}
	return nil, nil
}

func printCodexTrust(env *cli.Env, t *harness.CodexTrust, err error) {
	if err != nil {
		fmt.Fprintf(env.UI.Err, "warning: %s\n", quote.Text(err.Error()))
		return
	}
	if t == nil {
		return
	}
	if t.Changed {
		env.UI.Printf("Recorded Codex's trust in these %d hooks, and no other, in %s.\n", len(t.Hooks), quote.C(t.Config))
	}
	if !t.ProjectTrusted {
		fmt.Fprintf(env.UI.Err, "warning: Codex does not trust this project, and runs none of its hooks until it does: %s\n",
			quote.Text(t.Step))
	}
}

type installJSON struct {
	Harness string         `json:"harness"`
	Scope   string         `json:"scope"`
	DryRun  bool           `json:"dry_run"`
	Files   []harness.File `json:"files"`
	// Codex only: the trust recorded for its hooks, or why none was.
	CodexTrust *harness.CodexTrust `json:"codex_trust,omitempty"`
	Warning    string              `json:"warning,omitempty"`
}

func installResult(f installFlags, files []harness.File, dry bool) installJSON {
	if files == nil {
		files = []harness.File{}
	}
	return installJSON{Harness: f.Harness, Scope: f.Scope, DryRun: dry, Files: files}
}
