package checkpointcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/harness"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/harnessproc"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/ui"
)

// HookCmd runs as a harness hook, or installs the hooks (docs/harness.md#hooks).
// Each harness of harness.Kinds is a verb of its own (hook claude-code,
// hook codex, ...), made from the list when the grammar is built.
type HookCmd struct {
	Harnesses kong.Plugins     `embed:""`
	Install   HookInstallCmd   `cmd:"" help:"Merge git-venom's hook entries into the harness's settings."`
	Uninstall HookUninstallCmd `cmd:"" help:"Remove exactly the entries hook install added."`
}

// newHookCmd builds hook's grammar with one verb per harness.
func newHookCmd() HookCmd {
	return HookCmd{Harnesses: kong.Plugins{harnessVerbs(harness.Kinds)}}
}

// harnessVerbs is a struct made at run time with one field per harness,
// each a HookRunCmd verb named for its harness: kong's grammar is struct
// fields, and the list of harnesses is data (harness.Kinds).
func harnessVerbs(kinds []*kind.Kind) any {
	var fields []reflect.StructField
	for i, k := range kinds {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("H%d", i),
			Type: reflect.TypeOf(HookRunCmd{}),
			Tag:  reflect.StructTag(fmt.Sprintf(`cmd:"" name:%q help:%q`, k.Name, k.Help)),
		})
	}
	return reflect.New(reflect.StructOf(fields)).Interface()
}

// hookFlags name the agent the hook captures for (docs/checkpoints.md#agents-turns-and-states, docs/harness.md#hook-agents).
type hookFlags struct {
	Agent     string `name:"agent" help:"The agent (default: VENOM_AGENT, else one per harness session: ${agents}, or claude-<8 of the session id> beside another live session)."`
	Isolation string `name:"isolation" enum:",in_place,worktree,copy" default:"" help:"How the agent's tree is isolated, fixed at registration."`
	Parent    string `name:"parent" help:"The agent's parent, fixed at registration."`
	PerTool   bool   `name:"per-tool" help:"Mark each tool call that changed the tree (docs/checkpoints.md#tool-calls)."`
}

// HookRunCmd is one harness's hook: `hook <harness>`.
type HookRunCmd struct {
	hookFlags `embed:""`
	Notify    string `arg:"" optional:"" name:"json" help:"${notify_help}"`
}

// Run handles one event of the harness the verb is named for.
func (c *HookRunCmd) Run(env *cli.Env, kctx *kong.Context) error {
	k := harness.Lookup(kctx.Selected().Name)
	if k == nil {
		return fmt.Errorf("hook verb %q has no harness", kctx.Selected().Name)
	}
	return c.run(env, k)
}

// run handles the event for harness k, as read by kong or by CLI.Read.
func (c *HookRunCmd) run(env *cli.Env, k *kind.Kind) error {
	if c.Notify != "" && k.Notify == nil {
		return errcode.Newf(errcode.InvalidParamsUsage, map[string]string{"harness": k.Name},
			"%s's hook reads its payload on stdin, not as an argument", k.Title)
	}
	return runHook(env, k, c.hookFlags, c.Notify)
}

// runHook never fails the harness: every problem is one line on stderr,
// and the exit status is 0 (docs/harness.md#hooks). It runs within venom.timeout from
// its start (hookdeadline.go).
func runHook(env *cli.Env, k *kind.Kind, f hookFlags, notify string) error {
	env.Hook = true
	d := startHookDeadline(env)
	defer d.end()
	h := harness.Hook{Harness: k.Name, Agent: f.Agent, Isolation: f.Isolation, Parent: f.Parent, Dir: env.Dir,
		PerTool: f.PerTool, Note: func(err error) { hookWarn(env, err) }}
	if h.Agent == "" {
		h.Agent = env.Getenv("VENOM_AGENT")
	}
	// Left empty, the agent is the session's default (harness.DefaultAgent).
	h.Process = journal.ProcessOf(harnessproc.Harness(env.Getenv, k.PIDVar))
	var p *harness.Payload
	var perr error
	if notify != "" {
		p, perr = harness.ParseNotify(notify, k)
	} else {
		p, perr = harness.ReadHook(env.UI.In, k)
	}
	if p != nil && p.Cwd != "" {
		dir, err := hookDir(env, p.Cwd)
		if err != nil {
			hookWarn(env, err)
			return nil
		}
		env.Dir, h.Dir = dir, dir
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

// hookDir is the folder a hook works in (docs/harness.md#hooks): the
// payload's cwd when it lies in the worktree the hook process runs in (a
// subfolder), or when the process runs in no repository; otherwise the
// process's own folder. A payload naming another repository than the one
// the harness runs its hook in is refused: its cwd is the agent's shell's,
// or anything a payload says, and following it captured that
// repository's untracked files (its .env) there.
func hookDir(env *cli.Env, cwd string) (string, error) {
	if cwd == env.Dir {
		// Where harnesses run their hooks: the answer is cwd either
		// way, without opening the repository twice more.
		return cwd, nil
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return env.Dir, nil
	}
	here, err := repo.Open(env.Ctx, env.Dir, env.Environ)
	if err != nil {
		return cwd, nil // the payload names the only repository
	}
	if there, err := repo.Open(env.Ctx, cwd, env.Environ); err == nil && there.Top == here.Top {
		return cwd, nil
	}
	return "", errcode.Newf(errcode.InvalidParamsHookInput, nil,
		"the payload's cwd %s is outside %s, the worktree this hook runs in; nothing was captured",
		quote.Text(cwd), quote.Text(here.Top))
}

func hookWarn(env *cli.Env, err error) {
	e := errcode.From(err, errcode.FailedInternal)
	fmt.Fprintf(env.UI.Err, "git-venom hook: %s: %s\n", e.Code, quote.Text(strings.ReplaceAll(e.Message, "\n", " ")))
}

// installFlags are hook install's and uninstall's.
type installFlags struct {
	Harness   string `arg:"" help:"The harness: ${harnesses}."`
	Agent     string `name:"agent" help:"Put --agent=A in the hook command (default: the hook's own default)."`
	Isolation string `name:"isolation" enum:",in_place,worktree,copy" default:"" help:"Put --isolation=I in the hook command."`
	Scope     string `name:"scope" enum:"local,project,user" default:"local" help:"local: this clone's own settings (as ${local_example}); project: the ones committed for everyone; user: your home folder's. --dry-run names each file."`
	Via       string `name:"via" enum:"${via}" default:"${via_default}" help:"${via_help}"`
	DryRun    bool   `name:"dry-run" help:"Write nothing: name each file, what would happen to it and what it would hold."`
	PerTool   bool   `name:"per-tool" help:"Also run the hook after shell tool calls, and mark each call that changed the tree."`
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
	if harness.Lookup(f.Harness) == nil {
		return harness.Unknown(f.Harness)
	}
	in := harness.Install{Harness: f.Harness, Agent: f.Agent, Isolation: f.Isolation, Scope: f.Scope, Via: f.Via,
		PerTool: f.PerTool, Getenv: env.Getenv}
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
	k := harness.Lookup(f.Harness)
	setup := in.Setup(files, uninstall, env.Environ)
	if f.DryRun {
		note := ""
		if k.Install != nil {
			note = k.Install.Note(setup)
		}
		if env.JSON {
			res := installResult(f, files, true)
			res.Warning = note
			return env.UI.JSON(res)
		}
		// Whole settings files: paged at a terminal, as git pages a
		// diff; the note comes after the pager, where it is read.
		unpage := env.UI.Page()
		for _, file := range files {
			path := quote.C(file.Path)
			switch action(file) {
			case actionCreate:
				env.UI.Printf("%s\n", ui.PathLine("Would create "+path+":", "Would create:", path))
			case actionChange:
				env.UI.Printf("%s\n", ui.PathLine("Would change "+path+" to:", "Would change this file to what follows:", path))
			case actionRemove:
				env.UI.Printf("%s\n", ui.PathLine("Would remove "+path+", which holds only git-venom's hooks.", "Would remove this file, which holds only git-venom's hooks:", path))
				continue
			default:
				printUnchanged(env, file, uninstall)
				continue
			}
			_, _ = env.UI.Out.Write(file.Content)
		}
		unpage()
		if note != "" {
			fmt.Fprintf(env.UI.Err, "%s\n", ui.Wrap("note: "+quote.Text(note), ui.Columns80, "  "))
		}
		return nil
	}
	var after func(context.Context) kind.Done
	if k.Install != nil {
		after = k.Install.Begin(env.Ctx, setup)
	}
	if err := harness.Apply(files); err != nil {
		return err
	}
	var done kind.Done
	if after != nil {
		done = after(env.Ctx)
	}
	if env.JSON {
		res := installResult(f, files, false)
		res.Extra, res.Warning = done, done.Warning
		return env.UI.JSON(res)
	}
	bold := env.UI.OutStyle(color.Bold)
	for _, file := range files {
		path := quote.C(file.Path) // the repository's folder may be named anything
		switch action(file) {
		case actionNone:
			printUnchanged(env, file, uninstall)
		case actionRemove:
			env.UI.Printf("%s\n", ui.PathLine("Removed "+bold(path)+": git-venom had created it.", "Removed this file, which git-venom had created:", bold(path)))
		case actionCreate:
			env.UI.Printf("%s\n", ui.PathLine("Installed git-venom's "+f.Harness+" hooks in "+bold(path)+" (new file).", "Installed git-venom's "+f.Harness+" hooks in a new file:", bold(path)))
		case actionChange:
			if uninstall {
				env.UI.Printf("%s\n", ui.PathLine("Removed git-venom's "+f.Harness+" hooks from "+bold(path)+".", "Removed git-venom's "+f.Harness+" hooks from:", bold(path)))
			} else {
				env.UI.Printf("%s\n", ui.PathLine("Installed git-venom's "+f.Harness+" hooks in "+bold(path)+".", "Installed git-venom's "+f.Harness+" hooks in:", bold(path)))
			}
		}
	}
	if !uninstall && s != nil && f.Scope == harness.ScopeLocal {
		hintIgnore(env, s, files)
	}
	// A harness's sentences name files: wrapped to 80 columns between
	// words, a path standing whole.
	if done.Warning != "" {
		fmt.Fprintf(env.UI.Err, "%s\n", ui.Wrap("warning: "+quote.Text(done.Warning), ui.Columns80, "  "))
	}
	for _, line := range done.Said {
		env.UI.Printf("%s\n", ui.Wrap(line, ui.Columns80, "  "))
	}
	for _, line := range done.Warned {
		fmt.Fprintf(env.UI.Err, "%s\n", ui.Wrap(line, ui.Columns80, "  "))
	}
	return nil
}

// What install or uninstall does to one file.
const (
	actionCreate = "create"
	actionChange = "change"
	actionRemove = "remove"
	actionNone   = "none"
)

func action(f harness.File) string {
	switch {
	case !f.Changed:
		return actionNone
	case f.Content == nil:
		return actionRemove
	case !f.Existed:
		return actionCreate
	}
	return actionChange
}

// printUnchanged says why a file is left as it is.
func printUnchanged(env *cli.Env, file harness.File, uninstall bool) {
	path := quote.C(file.Path)
	switch {
	case !uninstall:
		env.UI.Printf("%s\n", ui.PathLine(path+" is already as it should be.", "Already as it should be:", path))
	case !file.Existed:
		env.UI.Printf("%s\n", ui.PathLine("Nothing to remove: there is no "+path+".", "Nothing to remove: there is no such file as", path))
	default:
		env.UI.Printf("%s\n", ui.PathLine("Nothing to remove: "+path+" holds no git-venom hooks.", "Nothing to remove: no git-venom hooks in", path))
	}
}

type installJSON struct {
	Harness string     `json:"harness"`
	Scope   string     `json:"scope"`
	DryRun  bool       `json:"dry_run"`
	Files   []fileJSON `json:"files"`
	// Extra is the harness's own install step's member (kind.Done's Key
	// and Value), between files and warning; none when its Key is "".
	Extra   kind.Done `json:"-"`
	Warning string    `json:"warning,omitempty"`
}

// MarshalJSON writes the fields in their order, the harness's own member
// among them.
func (r installJSON) MarshalJSON() ([]byte, error) {
	type fields installJSON // without this method
	head := fields(r)
	head.Warning = ""
	b, err := ui.Marshal(head)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	b = b[:len(b)-1] // the object's closing brace
	for _, m := range []struct {
		key string
		v   any
	}{{r.Extra.Key, r.Extra.Value}, {"warning", r.Warning}} {
		if m.key == "" || m.key == "warning" && r.Warning == "" {
			continue
		}
		v, err := ui.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		k, _ := ui.Marshal(m.key)
		b = append(append(append(append(b, ','), bytes.TrimSpace(k)...), ':'), bytes.TrimSpace(v)...)
	}
	return append(b, '}'), nil
}

// fileJSON is one file of --json: with --dry-run, the content it would
// have (create and change).
type fileJSON struct {
	Path    string  `json:"file"`
	Changed bool    `json:"changed"`
	Action  string  `json:"action"`
	Content *string `json:"content,omitempty"`
}

func installResult(f installFlags, files []harness.File, dry bool) installJSON {
	out := installJSON{Harness: f.Harness, Scope: f.Scope, DryRun: dry, Files: []fileJSON{}}
	for _, file := range files {
		j := fileJSON{Path: file.Path, Changed: file.Changed, Action: action(file)}
		if dry && (j.Action == actionCreate || j.Action == actionChange) {
			c := string(file.Content)
			j.Content = &c
		}
		out.Files = append(out.Files, j)
	}
	return out
}

// hintIgnore names the command that makes git ignore the local-scope
// files install wrote in the tree, when git neither ignores nor tracks
// them: they are this clone's own, yet git status shows them and every
// checkpoint holds them. Claude Code ignores its settings.local.json so;
// install writes nothing outside the harness's files, so it says the
// command (for info/exclude, shared by the worktrees), which uninstall
// never needs to undo.
func hintIgnore(env *cli.Env, s *state.Store, files []harness.File) {
	var shown []string
	for _, file := range files {
		rel, err := filepath.Rel(s.Repo.Top, file.Path)
		if err != nil || file.Content == nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			continue
		}
		rel = filepath.ToSlash(rel)
		_, err = s.Repo.Git.Run(env.Ctx, "check-ignore", "-q", "--no-index", "--", rel)
		if gitcli.ExitCode(err) != 1 {
			continue // ignored already, or git could not say
		}
		if _, err := s.Repo.Git.Run(env.Ctx, "ls-files", "--error-unmatch", "--", rel); err == nil {
			continue // tracked: an ignore rule does not apply
		}
		shown = append(shown, "/"+rel)
	}
	if len(shown) == 0 {
		return
	}
	hint := env.UI.HintStyle()
	text := ui.Wrap("hint: git does not ignore "+quote.Join(shown, ", ")+
		"; git status shows it and checkpoints hold it. To ignore it in this clone:", ui.Columns80, "hint: ")
	for _, l := range strings.Split(text, "\n") {
		fmt.Fprintf(env.UI.Err, "%s\n", hint(l))
	}
	// The file itself, shortest from here (.git/info/exclude at the top).
	exclude := filepath.Join(s.Repo.CommonDir, "info", "exclude")
	if rel, err := filepath.Rel(env.Dir, exclude); err == nil && len(rel) < len(exclude) {
		exclude = rel
	}
	fmt.Fprintf(env.UI.Err, "%s\n", hint("hint:   "+quote.Shell(append([]string{"printf", "%s\\n"}, shown...))+
		" >> "+quote.Shell([]string{exclude})))
}
