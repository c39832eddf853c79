// Package cli wires a command's kong grammar to its streams and repository,
// and is the one place that turns an error into output and an exit code
// (docs/errors.md#exit-codes). Only Main's caller exits.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/alecthomas/kong"
	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/suggest"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/ui"
)

// Version is set at build time with -ldflags "-X .../lib/cli.Version=...".
var Version = ""

// VersionString is the version, from the build flags or the module info.
func VersionString() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Globals are the flags every command takes.
type Globals struct {
	JSON    bool             `name:"json" help:"Print one JSON object on stdout; errors as {\"error\":{...}}."`
	Color   string           `name:"color" enum:"auto,always,never" default:"auto" placeholder:"<when>" help:"Colour: auto (at a terminal; the default, or color.venom, or color.ui), always (also a bare --color) or never."`
	NoPager bool             `name:"no-pager" help:"Never send long output through the pager (core.pager, GIT_PAGER, PAGER, less)."`
	Quiet   bool             `name:"quiet" short:"q" help:"Quiet, as git's -q: no progress, no lock-wait messages, no summary line where that is all a command says (take); warnings and errors still show."`
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// Env is what a command runs with.
type Env struct {
	Ctx     context.Context
	UI      *ui.Streams
	Environ []string
	Dir     string
	JSON    bool
	Name    string
	// Hook: the command runs as a harness hook (no notes on stderr).
	Hook bool
	// Exit ends a command past its backstop (Backstop.Exit): nil, the
	// process with it, as the binaries do; a caller that runs commands in
	// a process of its own sets it.
	Exit func(code int)

	store *state.Store
}

// Store opens the repository of the current folder and its venom config.
func (e *Env) Store() (*state.Store, error) {
	if e.store != nil {
		return e.store, nil
	}
	r, err := repo.Open(e.Ctx, e.Dir, e.Environ)
	if err != nil {
		return nil, err
	}
	warning, err := r.RootInOthers(e.Getenv("SUDO_UID"))
	if err != nil {
		return nil, err
	}
	if warning != "" {
		fmt.Fprintf(e.UI.Err, "warning: %s\n", quote.Text(warning))
	}
	cfg, err := config.Load(e.Ctx, r.Git, e.Environ)
	if err != nil {
		return nil, err
	}
	e.store = &state.Store{Repo: r, Config: cfg, Environ: e.Environ, Damaged: e.warnDamageOnce(),
		LockWait: e.waitingForLock}
	e.noteIgnoredConfig(r.CommonDir)
	return e.store, nil
}

// noteIgnoredConfig says, in one line on stderr, that venom.* keys in the
// repository's own config are ignored (config.Ignored), so that a setting
// there is not silently without effect; doctor gives the command. Not in
// a hook (the harness shows a hook's stderr to no one, or to the model),
// nor with --json or -q.
func (e *Env) noteIgnoredConfig(commonDir string) {
	if e.Hook || e.JSON || e.UI.Quiet() {
		return
	}
	entries := config.Ignored(commonDir)
	if len(entries) == 0 {
		return
	}
	var names []string
	for _, en := range entries {
		if !slices.Contains(names, en.Name) {
			names = append(names, en.Name)
		}
	}
	fmt.Fprintf(e.UI.Err, "note: %s in the repository's config is ignored (only --global and --system count; "+
		"see git venom-checkpoint doctor)\n", quote.Text(strings.Join(names, ", ")))
}

// Read opens the store and folds its journal without the lock, for the
// commands that only read.
func (e *Env) Read() (*state.Store, *agents.State, error) {
	s, err := e.Store()
	if err != nil {
		return nil, nil, err
	}
	_, st, err := s.Read()
	return s, st, err
}

// Getenv reads the command's environment.
func (e *Env) Getenv(name string) string { return gitcli.Getenv(e.Environ, name) }

type exitSignal int

// StopSignals are the signals that ask a command to stop: Ctrl-C, kill's
// default, and the hangup a closed terminal or a harness ending its
// session sends. Main ends the command's context on each, so that the
// command stops at its next step with its lock released and its log
// whole, rather than dying in the middle of a transaction; git does the
// same for these three (sigchain_push_common cleans up its lock files).
var StopSignals = interrupt.Signals

// Main parses args against grammar (a kong struct whose commands have
// Run(*Env) error) and runs the chosen command. It returns the exit code.
func Main(name string, grammar any, args []string) int {
	// A command lives for milliseconds and reads the whole log: collecting
	// garbage at 5x the live heap instead of 2x halves the CPU of a
	// 10,000-record list or events, for a few MB more at most.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// ...but a capture of 300,000 new files holds about 100 MB live, and 5x
	// that was most of its 700 MB resident set: past this soft limit the
	// collector runs as often as it must to stay under it instead.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(192 << 20)
	}
	defer testhook.Profile()()
	streams := ui.System()
	ctx, stop := signal.NotifyContext(context.Background(), StopSignals...)
	defer stop()
	dir, _ := os.Getwd()
	env := &Env{Ctx: ctx, UI: streams, Environ: os.Environ(), Dir: dir, Name: name, JSON: WantsJSON(args)}
	return Run(env, grammar, args)
}

// Varser is a grammar whose help names things known only at run time,
// such as the registered harnesses, as ${name} in its tags.
type Varser interface{ Vars() map[string]string }

// vars are the ${name}s help may use: the version, and the grammar's own.
func vars(env *Env, grammar any) kong.Vars {
	v := kong.Vars{"version": env.Name + " " + VersionString()}
	if g, ok := grammar.(Varser); ok {
		for k, s := range g.Vars() {
			v[k] = s
		}
	}
	return v
}

// Run is Main with its environment given, for tests.
func Run(env *Env, grammar any, args []string) int {
	env.Ctx = testhook.With(env.Ctx, env.Environ)
	return guarded(env, func() int {
		if code, ok := runRead(env, grammar, args); ok {
			return code
		}
		return runKong(env, grammar, args)
	})
}

// guarded runs a command, ending with kong's exit code or a panic's report.
func guarded(env *Env, run func() int) (code int) {
	defer func() {
		if r := recover(); r != nil {
			if s, ok := r.(exitSignal); ok {
				code = int(s)
				return
			}
			code = Report(env, errcode.Newf(errcode.FailedInternal, nil, "panic: %v", r).
				Hint("this is a bug in git-venom; please report it with the command you ran"))
		}
	}()
	return run()
}

// runKong reads args with kong: the grammar's narrow part, else the whole.
func runKong(env *Env, grammar any, args []string) int {
	if code, ok := runNarrow(env, grammar, args); ok {
		return code
	}
	return runWhole(env, grammar, args)
}

// Reader is a grammar that reads some argument lists itself, without kong:
// the hook call a harness makes after every tool call, where building
// kong's model by reflection, parsing and calling Run through it were an
// eighth of the process's page faults. Read returns the command and the
// global flags kong would have read, or ok false for any list it does not
// read exactly as kong would: kong then reads it, so that errors, usage
// and help are kong's.
type Reader interface {
	Read(args []string) (run func(*Env) error, globals *Globals, ok bool)
}

// runRead runs args as the grammar's Reader reads them; ok is false, and
// nothing has run or been printed, when it does not read them.
func runRead(env *Env, grammar any, args []string) (code int, ok bool) {
	g, isReader := grammar.(Reader)
	if !isReader || mayAskHelp(args) {
		return 0, false
	}
	run, globals, ok := g.Read(args)
	if !ok {
		return 0, false
	}
	env.JSON = env.JSON || globals.JSON
	env.configureOutput(globals, args)
	if err := run(env); err != nil {
		return Report(env, err), true
	}
	return 0, true
}

// runWhole reads args with the whole grammar and runs the command.
func runWhole(env *Env, grammar any, args []string) int {
	parser, err := newParser(env, grammar)
	if err != nil {
		return Report(env, errcode.Newf(errcode.FailedInternal, nil, "bad grammar: %v", err))
	}
	if len(args) > 0 && args[0] == completeVerb {
		return complete(env, parser, grammar, args[1:])
	}
	if wantsManual(parser, args) {
		if showManual(env) {
			return 0
		}
		args = shortHelp(parser, args)
	}
	args = glueValues(parser, args)
	env.JSON = WantsJSON(args) // --label --json labels "--json"
	args = splitPaths(grammar, args)
	args = helpArgs(parser, args)
	args = bareColor(args)
	kctx, err := parser.Parse(args)
	if err != nil {
		return Report(env, usageError(parser, verbTypo(parser, args, err)))
	}
	return runParsed(env, grammar, args, kctx)
}

// Narrower is a grammar that has, for some argument lists, a part of
// itself that reads them: the same verb types under the same names, the
// others left out. Building kong's model of a whole grammar (every verb,
// flag and help text, read by reflection and interpolated) was a fifth
// of the start-up of each hook call; of one verb, a small part of it.
// Narrow returns nil when the whole grammar must read args.
type Narrower interface{ Narrow(args []string) any }

// runNarrow runs args with the grammar's narrow part when it has one for
// them and it reads them without an error; ok is false otherwise, and
// then nothing has run or been printed: the whole grammar reads args
// again, so that an error, its usage and its hints are the same as
// without a narrow part. Help is never asked of a narrow part (it would
// show only that part), so neither is an argument that might ask for it.
// A lone --version, every grammar's, is read by the global flags alone.
func runNarrow(env *Env, grammar any, args []string) (code int, ok bool) {
	if mayAskHelp(args) {
		return 0, false
	}
	var narrow any
	if g, isNarrower := grammar.(Narrower); isNarrower {
		narrow = g.Narrow(args)
	}
	if narrow == nil && len(args) == 1 && args[0] == "--version" {
		narrow = &struct{ Globals }{}
	}
	if narrow == nil {
		return 0, false
	}
	parser, err := newParser(env, narrow)
	if err != nil {
		return 0, false
	}
	args = bareColor(args)
	kctx, err := parser.Parse(args)
	if err != nil {
		return 0, false
	}
	return runParsed(env, narrow, args, kctx), true
}

// mayAskHelp reports an argument that is, or might be read as, a request
// for help: a help verb, --help, or a cluster of short flags (-qh).
func mayAskHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "help" || a == "--help" || a == completeVerb || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && a != "-q") {
			return true
		}
	}
	return false
}

// runParsed runs the command kong chose.
func runParsed(env *Env, grammar any, args []string, kctx *kong.Context) int {
	env.JSON = env.JSON || jsonFlag(grammar)
	env.configureOutput(grammar, args)
	if err := kctx.Run(env); err != nil {
		if h, ok := grammar.(Hinter); ok {
			if e, ok := errcode.As(err); ok {
				h.Hints(e)
			}
		}
		return Report(env, err)
	}
	return 0
}

// Hinter is a grammar that writes hints of a command's error from what
// the floors below it do not know, such as the registered harnesses.
type Hinter interface{ Hints(e *errcode.Error) }

// newParser builds kong's model of grammar, as every command has it.
func newParser(env *Env, grammar any) (*kong.Kong, error) {
	return kong.New(grammar,
		kong.Name(name(env)),
		kong.Description(description(env.Name)),
		kong.Exit(func(c int) { panic(exitSignal(c)) }),
		kong.Writers(env.UI.Out, env.UI.Err),
		vars(env, grammar),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Help(printHelp),
		kong.Bind(env),
		kong.PostBuild(placeholders),
	)
}

// name is the command as people type it, git venom-checkpoint: help's
// usage lines and messages name it so, not by the binary's name.
func name(env *Env) string { return "git " + strings.TrimPrefix(env.Name, "git-") }

// bareColor reads a bare --color as git does, --color=always; the value
// may still follow as the next word (--color never), as kong reads it.
func bareColor(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == "--" {
			break
		}
		if a != "--color" {
			continue
		}
		if i+1 < len(out) && IsColorWhen(out[i+1]) {
			continue
		}
		out[i] = "--color=always"
	}
	return out
}

// IsColorWhen reports a value --color takes: one of Globals.Color's
// choices, read from its tag as kong reads them.
func IsColorWhen(s string) bool {
	f, _ := reflect.TypeFor[Globals]().FieldByName("Color")
	return slices.Contains(strings.Split(f.Tag.Get("enum"), ","), s)
}

// placeholders writes every flag's value in help as git's manuals do,
// --agent=<agent>, instead of kong's type (STRING) or default ("").
func placeholders(k *kong.Kong) error {
	return kong.Visit(k.Model, func(n kong.Visitable, next kong.Next) error {
		if f, ok := n.(*kong.Flag); ok && !f.IsBool() && !f.IsCounter() {
			switch {
			case f.PlaceHolder == "":
				f.PlaceHolder = "<" + f.Name + ">"
			case f.PlaceHolder == strings.ToUpper(f.PlaceHolder):
				f.PlaceHolder = "<" + strings.ToLower(f.PlaceHolder) + ">"
			}
		}
		return next(nil)
	})
}

// PathTaker is a grammar that takes paths after "--", as git's commands
// do (git diff k1 -- a.txt): kong would read them as more positional
// arguments, and could not tell a path from a checkpoint.
type PathTaker interface {
	TakePaths(paths []string)
}

// splitPaths gives a PathTaker the arguments after the first "--" and
// returns those before it.
func splitPaths(grammar any, args []string) []string {
	g, ok := grammar.(PathTaker)
	if !ok {
		return args
	}
	for i, a := range args {
		if a == "--" {
			g.TakePaths(args[i+1:])
			return args[:i]
		}
	}
	return args
}

func description(name string) string {
	switch name {
	case "git-venom-checkpoint":
		return "Take, list and maintain checkpoints of a coding agent's files."
	case "git-venom-rollback":
		return "Roll an agent's tree back to a checkpoint: a dry run, then the real call quoting its plan."
	case "git-venom-diff":
		return "Show what changed between two checkpoints, or since one."
	}
	return ""
}

// usageError maps kong's parse errors to invalid_params.usage, keeping an
// coded error (docs/errors.md) a Validate() returned. A value outside a
// flag's choices is that flag's own code where the registry has one
// (--reason: invalid_params.reason), with the choice it is likely a typo
// of; the hint names the verb whose flags -h lists.
func usageError(parser *kong.Kong, err error) error {
	if e, ok := errcode.As(err); ok {
		return e
	}
	var pe *kong.ParseError
	if !errors.As(err, &pe) {
		return errcode.Newf(errcode.InvalidParamsUsage, nil, "%v", err)
	}
	if e, ok := errcode.As(pe.Unwrap()); ok {
		return e
	}
	verb := parser.Model.Name
	if pe.Context != nil {
		if sel := pe.Context.Selected(); sel != nil {
			verb += " " + sel.Path()
		}
	}
	if m := enumError().FindStringSubmatch(err.Error()); m != nil {
		return enumUsage(m[1], strings.Split(strings.ReplaceAll(m[2], `"`, ""), ","), m[3], verb)
	}
	return errcode.Newf(errcode.InvalidParamsUsage, nil, "%v", err).Hint("%s -h lists its flags", verb)
}

// enumError matches kong's error for a value outside an enum.
var enumError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^--([a-z0-9-]+) must be one of ((?:"[^"]*",?)+) but got "(.*)"$`)
})

func enumUsage(flag string, choices []string, got, verb string) error {
	choices = slices.DeleteFunc(choices, func(c string) bool { return c == "" })
	format, args := "--%s=%s: the choices are %s", []any{flag, quote.C(got), strings.Join(choices, ", ")}
	// "error: invalid_params.isolation: " and the line fit 80 columns,
	// else the choices go on a hint line of their own.
	long := len("error: invalid_params.isolation: ")+len(fmt.Sprintf(format, args...)) > 80
	// --reason and --isolation have codes of their own, with the value
	// given; each call names its code, so errcode's data check reads it.
	var e *errcode.Error
	switch flag {
	case "reason":
		e = errcode.Newf(errcode.InvalidParamsReason, map[string]string{"reason": got}, format, args...)
	case "isolation":
		e = errcode.Newf(errcode.InvalidParamsIsolation, map[string]string{"isolation": got}, format, args...)
	default:
		e = errcode.Newf(errcode.InvalidParamsUsage, nil, format, args...)
	}
	if long {
		e.Shorter("--%s=%s is not one of its choices", flag, quote.C(got)).
			Hint("the choices are %s", strings.Join(choices, ", "))
	}
	switch close := suggest.Close(got, choices); {
	case got != "" && len(close) == 1:
		e.Hint("did you mean --%s=%s?", flag, close[0])
	case got != "" && len(close) > 1:
		e.Hint("did you mean one of %s?", strings.Join(close, ", "))
	default:
		e.Hint("%s -h says what each means", verb)
	}
	return e
}

// Report prints err as docs/errors.md#exit-codes says and returns its exit code.
func Report(env *Env, err error) int {
	var silent Silent
	if errors.As(err, &silent) {
		return silent.Code
	}
	if closedPipe(err) {
		return pipeCode
	}
	if env.UI.PagerQuit(err) {
		return 0 // the person quit the pager before the end, as with git log
	}
	e := errcode.From(err, errcode.FailedInternal)
	if env.JSON {
		_ = env.UI.JSON(ErrorJSON(e))
	} else {
		// A message may quote a label, a path or a ref read from the
		// repository: no byte of it may reach the terminal as a control.
		red := env.UI.ErrStyle(color.FgRed, color.Bold)
		fmt.Fprintf(env.UI.Err, "%s %s: %s\n", red("error:"), e.Code, quote.Text(e.Line()))
		hint := env.UI.HintStyle()
		for _, h := range e.Hints {
			fmt.Fprintf(env.UI.Err, "%s\n", hint("hint: "+quote.Text(h)))
		}
		if e.Code == errcode.FailedInternal {
			// A bug path: the whole chain, layer by layer, for the report.
			for c := e.Cause(); c != nil; c = errors.Unwrap(c) {
				fmt.Fprintf(env.UI.Err, "caused by: %s\n", quote.Text(c.Error()))
			}
		}
	}
	return e.ExitCode()
}

// WantsJSON reports --json among the arguments before "--": an error in
// parsing them is still answered as JSON (main, and tests through Run).
func WantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" || a == "--json=1" || a == "--json=yes" {
			return true
		}
	}
	return false
}

// jsonFlag reads --json from a grammar that embeds Globals.
func jsonFlag(grammar any) bool {
	type hasGlobals interface{ GlobalFlags() *Globals }
	if g, ok := grammar.(hasGlobals); ok {
		return g.GlobalFlags().JSON
	}
	return false
}

// GlobalFlags lets Run read the embedded flags.
func (g *Globals) GlobalFlags() *Globals { return g }

// ErrorBody is the error envelope's body, members in docs/errors.md#the-envelope's order.
type ErrorBody struct {
	Code    errcode.Code `json:"code"`
	Message string       `json:"message"`
	Data    any          `json:"data"`
}

// ErrorJSON is {"error":{"code","message","data"}} (docs/errors.md#exit-codes).
func ErrorJSON(e *errcode.Error) any {
	return struct {
		Error ErrorBody `json:"error"`
	}{ErrorBody{e.Code, e.Message, e.Data}}
}
