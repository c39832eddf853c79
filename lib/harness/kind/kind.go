// Package kind says what one coding-agent harness is to git-venom: the
// facts and functions that differ from one harness to the next, in one
// value. Each harness package (claude, codex, gemini) exports its Kind; the
// harness package lists them once (harness.Kinds) and everything else asks
// that list, so that adding a harness is one package and one line.
package kind

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
)

// Event is one hook event install puts in the harness's settings, with the
// matcher its group carries (a tool-name pattern), if any.
type Event struct {
	Name    string
	Matcher string
}

// End is what a turn's transcript says of its end: the entry a rewind
// anchors to (docs/checkpoints.md#retention-and-clean harness_end), and the harness's version.
type End struct {
	UUID    string
	Version string
}

// Member is one member of a JSON object.
type Member struct {
	Key   string
	Value any
}

// ErrNoEntry: the transcript has no entry to anchor a turn's end to, as
// when it is not written yet; the turn ends without an anchor, quietly.
var ErrNoEntry = errors.New("the transcript has no conversation entry")

// ErrNotNotify: the JSON is not a notify payload (Kind.Notify).
var ErrNotNotify = errors.New("not a notify payload")

// Scope is hook install's --scope: which settings file of the harness.
type Scope struct {
	Name   string              // "local", "project" or "user"
	Top    string              // the repository's top level
	Getenv func(string) string // HOME and the harness's own folder variables
}

// Kind is one harness.
type Kind struct {
	// Name is agent.registered's harness and the hook verb's name
	// ("claude-code"); Title is how people call it ("Claude Code").
	Name, Title string
	// Agent is the id the hook gives a session's agent when nothing names
	// one (harness.DefaultAgent).
	Agent string
	// Help is the `hook <name>` verb's help line.
	Help string
	// Notify reads the payload of the harness's notify program (Codex's),
	// which the hook gets as its last argument or on stdin, and returns
	// it as a hook payload; an error Is ErrNotNotify for other JSON.
	// nil: the harness has none, and a payload comes on stdin only.
	Notify func(data []byte) ([]byte, error)
	// NotifyHelp is the hook verb's help of that argument.
	NotifyHelp string

	// PIDVar is the variable in which the harness names its own process
	// to its hooks (CLAUDE_PID), or "": the hook's nearest ancestor that is
	// not a shell or git is taken (harnessproc.Harness).
	PIDVar string

	// Marks are the variables the harness sets in the environment of the
	// commands it runs, by which a command run from its shell is known
	// (Marked, docs/harness.md#callers): any one entry whose variables
	// are all set, "NAME=value" to that value, "NAME" to anything but "".
	Marks [][]string

	// Events are the hook events install writes.
	Events []Event
	// PerToolMatcher is the tool-call event's matcher with --per-tool:
	// the edit tools and the shell tool; "" when the harness has none.
	PerToolMatcher string
	// Aliases map this harness's event names onto the ones the hook acts
	// on (Claude Code's: UserPromptSubmit, Stop, PostToolUse, ...).
	Aliases map[string]string
	// PromptContext is the event name the hook's additionalContext answer
	// names (the rollback note): the harness's own name of the prompt event.
	PromptContext string
	// Edits lists the files an edit tool call names, or nil.
	Edits func(tool string, input json.RawMessage) []string

	// Settings is the hooks JSON file install merges its entries into
	// ({"hooks":{event:[{matcher?,hooks:[{type,command,timeout}]}]}}), as
	// a root folder and a slash path beneath it; nil when the harness has
	// no such file (its install is its own).
	Settings func(s Scope) (root, name string)
	// Plugin is the one file install writes whole (and uninstall removes),
	// for a harness that loads code instead of reading hook settings
	// (OpenCode): a root folder and a slash path beneath it; nil for the
	// others.
	Plugin func(s Scope) (root, name string)
	// PluginText is the plugin file's content, running argv for each event.
	PluginText func(argv []string) []byte
	// PluginOurs reports a file at Plugin's place that install wrote (and
	// uninstall may remove), edited since or not.
	PluginOurs func(data []byte) bool
	// SettingsStamp is what the harness writes into a settings file of its
	// own accord when the file lacks it (Qwen Code's "$version"), as
	// members of the file's object: install writes them first into a file
	// it creates, so that the harness has nothing to add, and uninstall
	// removes a file left with them alone, as it removes one left empty.
	SettingsStamp []Member
	// TimeoutMillis: the settings' timeout is in milliseconds, not seconds.
	TimeoutMillis bool
	// TimeoutMillisFrom: the harness reads a timeout of this many or more
	// as milliseconds (Qwen Code: 1000, from when its timeouts were
	// milliseconds), so one that long is written in milliseconds; 0: never.
	TimeoutMillisFrom int
	// SettingsComments: the harness reads its settings as JSON with
	// comments (// and /* */), which install keeps.
	SettingsComments bool

	// End reads a turn's end from the transcript a payload names: the
	// turn the file ends with, or the one before prompt before.
	End func(ctx context.Context, transcript, before string) (End, error)
	// Transcript finds a session's transcript when no payload names it
	// (a rollback ending a turn whose harness process exited); nil: none.
	Transcript func(getenv func(string) string, tree, session string) (string, error)

	// Rewind is the conversation's side of a rollback (docs/rollback.md#conversation); nil: the
	// harness cannot rewind, and a rollback offers --restore=files.
	Rewind conversation.Adapter
	// TurnOver reads the harness's own record of a turn that ended with no
	// hook (agents.RegisterTurnOver); nil: none.
	TurnOver func(*agents.Turn) bool
	// Checks are doctor's checks of this harness.
	Checks func(ctx context.Context, in Doctor) []Finding
	// Install is the harness's own part of hook install and uninstall,
	// beside the entries merged into Settings; nil: none.
	Install Installer
	// Via are hook install's --via values, the ways the harness can call
	// the hook (Setup.Via), the default first, and ViaHelp says what they
	// mean; nil: one way, and --via is not read.
	Via     []string
	ViaHelp string
	// Tested is the newest version of the harness the test suite runs.
	Tested string
}

// Doctor is what a harness's doctor checks may read.
type Doctor struct {
	Kind    *Kind // the harness checked
	Top     string
	Getenv  func(string) string
	Environ []string
	State   *agents.State
	// ReadSettings reads a settings file (name, slash-separated, beneath
	// root) as hook install does: refusing links that lead out of root,
	// FIFOs and devices.
	ReadSettings func(root, name string) ([]byte, error)
}

// Installer is a harness's own steps of hook install and uninstall (Codex:
// its notify program in config.toml, and its trust in the hooks).
type Installer interface {
	// Plan says whether install writes the hooks file (Settings) and which
	// other files it edits as text.
	Plan(ctx context.Context, s Setup) (hooks bool, edits []Edit, err error)
	// Note is what a dry run says of what the real install does beyond
	// writing the files, or "".
	Note(s Setup) string
	// Begin runs before the planned files are written; the function it
	// returns, if any, runs once they are.
	Begin(ctx context.Context, s Setup) func(context.Context) Done
}

// Setup is one hook install or uninstall, as a harness's own steps see it.
type Setup struct {
	Scope            Scope
	Agent, Isolation string // the hook command's flags, when given
	Via              string // --via: how the harness calls the hook
	Uninstall        bool
	Environ          []string // the environment the harness's program runs with
	// Hooks is the hooks file's path when install writes one, and
	// HooksChanged whether this install changes it (after Plan).
	Hooks        string
	HooksChanged bool
}

// Edit is a file a harness's install edits as text beside its hooks file
// (name, slash-separated, beneath root). Edit is given the file's bytes,
// nil when there is none, and returns what the file is to hold: nil for
// no file.
type Edit struct {
	Root, Name string
	Edit       func(data []byte) ([]byte, error)
}

// Done is what a harness's own install step did, for install's output.
type Done struct {
	// Key and Value are a member of install's --json result ("" for none).
	Key   string
	Value any
	// Warning says what could not be done (--json's warning, and stderr).
	Warning string
	// Said are lines for people on stdout, Warned lines on stderr.
	Said, Warned []string
}

// Finding is one doctor check's result (doctor.Check's fields).
type Finding struct {
	ID      string
	Status  string // "ok", "warn" or "fail"
	Message string
	Fix     string
}

// Marked reports a command run from the harness's shell: its environment
// (getenv) holds one of the harness's Marks.
func (k *Kind) Marked(getenv func(string) string) bool {
	for _, vars := range k.Marks {
		all := len(vars) > 0
		for _, v := range vars {
			name, value, exact := strings.Cut(v, "=")
			if got := getenv(name); got == "" || exact && got != value {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

// HookCommand is the start of every hook command git-venom installs for
// the harness named name; flags may follow it.
func HookCommand(name string) string { return "git venom-checkpoint hook " + name }

// IsHookCommand reports whether cmd is a hook command git-venom installed
// for the harness named name.
func IsHookCommand(name, cmd string) bool {
	base := HookCommand(name)
	return cmd == base || strings.HasPrefix(cmd, base+" ")
}
