// Package opencode is git-venom's OpenCode side. OpenCode has no hook
// commands: hook install writes a plugin (plugin.js) that sends its events
// to `git venom-checkpoint hook opencode`: chat.message (a turn starts),
// tool.execute.after (an edit), session.idle (it ends), session.created.
// A sub-agent's session reports under its parent's.
package opencode

import (
	_ "embed"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/codex"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// TestedVersion is the OpenCode the test suite runs (tests/harnesses/install).
const TestedVersion = "1.18.33"

// Kind is OpenCode to git-venom (harness.Kinds).
var Kind = kind.Kind{
	Name:   Name,
	Title:  "OpenCode",
	Agent:  "opencode",
	Help:   "Run from OpenCode's git-venom plugin: the event's JSON on stdin.",
	PIDVar: "OPENCODE_PID",
	// OpenCode sets OPENCODE=1 and OPENCODE_PID in every command it runs.
	Marks: [][]string{{"OPENCODE=1", "OPENCODE_PID"}},
	// The events the plugin reports (plugin.js), under OpenCode's names.
	Events: []kind.Event{{Name: "session.created"}, {Name: "chat.message"}, {Name: "tool.execute.after"},
		{Name: "session.idle"}},
	Aliases: map[string]string{
		"session.created":    "SessionStart",
		"chat.message":       "UserPromptSubmit",
		"tool.execute.after": "PostToolUse",
		"session.idle":       "Stop",
	},
	PromptContext: "chat.message",
	Edits:         EditedPaths,
	Plugin:        plugin,
	PluginText:    PluginText,
	PluginOurs:    func(data []byte) bool { return StateOf(data) != "foreign" },
	Rewind:        Adapter{},
	Checks:        checks,
	Tested:        TestedVersion,
}

// Name is the harness's name, as agent.registered records it.
const Name = "opencode"

// PluginName is the plugin file's name in a plugins folder.
const PluginName = "git-venom.js"

// plugin is the scope's plugin file: the repository's .opencode/plugins/
// (local and project alike: OpenCode has no local-only folder), or the
// user's $XDG_CONFIG_HOME/opencode/plugins/ (~/.config/opencode).
func plugin(s kind.Scope) (string, string) {
	if s.Name == "user" {
		dir := s.Getenv("XDG_CONFIG_HOME")
		if dir == "" {
			dir = filepath.Join(s.Getenv("HOME"), ".config")
		}
		return filepath.Join(dir, "opencode"), "plugins/" + PluginName
	}
	return s.Top, ".opencode/plugins/" + PluginName
}

//go:embed plugin.js
var pluginJS string

// PluginText is the plugin file calling argv (git venom-checkpoint hook
// opencode and install's flags): argv is written as a JSON array, which is
// a JavaScript array literal (a quote or newline in a word stays in its
// string), and nowhere else.
func PluginText(argv []string) []byte {
	list, _ := json.Marshal(argv)
	return []byte(strings.Replace(pluginJS, "COMMAND_ARGV", string(list), 1))
}

// Marker starts every plugin file git-venom writes: uninstall removes a
// file that starts with it, and only such a file.
const Marker = "// git-venom: turn checkpoints for OpenCode."

// EditedPaths returns the files a write, edit or apply_patch call names
// (OpenCode's arguments: filePath; apply_patch's patchText, whose headers
// are Codex's), or nil. The plugin adds the path OpenCode reports in the
// result's metadata as filepath, used when filePath is missing.
func EditedPaths(tool string, input json.RawMessage) []string {
	var in struct {
		FilePath  string `json:"filePath"`
		Reported  string `json:"filepath"`
		PatchText string `json:"patchText"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	switch tool {
	case "write", "edit", "multiedit":
		if in.FilePath != "" {
			return []string{in.FilePath}
		}
		if in.Reported != "" {
			return []string{in.Reported}
		}
	case "apply_patch":
		return codex.PatchPaths(in.PatchText)
	}
	return nil
}
