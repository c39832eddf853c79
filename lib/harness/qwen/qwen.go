// Package qwen is git-venom's Qwen Code side. Qwen Code, a Gemini CLI
// fork, takes Claude Code's hooks: the same event names, settings shape
// (in .qwen/settings.json) and stdin JSON, so the hook acts on its events
// as they come. A rollback of a qwen-code agent restores files only: Qwen
// Code resumes or forks a session only whole, and rewinding from outside
// would mean forging its internal, changing transcript format.
package qwen

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// TestedVersion is the Qwen Code the test suite runs (tests/harnesses/install).
const TestedVersion = "0.24.4"

// Name is the harness's name, as agent.registered records it.
const Name = "qwen-code"

// Kind is Qwen Code to git-venom (harness.Kinds).
var Kind = kind.Kind{
	Name:  Name,
	Title: "Qwen Code",
	Agent: "qwen",
	Help:  "Run as a Qwen Code hook: the event's JSON on stdin.",
	// Qwen Code sets QWEN_CODE=1 in the commands its shell tool runs (not
	// in its hooks' environment).
	Marks: [][]string{{"QWEN_CODE=1"}},
	// SessionEnd is left out: Qwen Code does not wait for it, and the next
	// prompt ends an interrupted turn anyway. StopFailure is not awaited
	// either, but in the interactive program, which runs on, it ends a
	// turn whose model call failed.
	Events: []kind.Event{{Name: "SessionStart"}, {Name: "UserPromptSubmit"},
		{Name: "PostToolUse", Matcher: EditTools}, {Name: "Stop"}, {Name: "StopFailure"}},
	PerToolMatcher: EditTools + "|run_shell_command",
	PromptContext:  "UserPromptSubmit",
	Edits:          EditedPaths,
	Settings:       settings,
	// Timeouts are seconds, but Qwen Code reads 1000 or more as
	// milliseconds, as its command hook timeouts once were.
	TimeoutMillisFrom: 1000,
	// Qwen Code strips comments before JSON.parse (strip-json-comments).
	SettingsComments: true,
	// Qwen Code 0.24.4 adds "$version": 4 to every settings file it reads
	// without one, at the end.
	SettingsStamp: []kind.Member{{Key: "$version", Value: 4}},
	Checks:        checks,
	Tested:        TestedVersion,
}

// EditTools are Qwen Code's file-editing tools. A matcher of names joined
// by | matches each name exactly (Qwen Code reads it as a list, not as a
// regular expression, unless it starts with ^ or a parenthesis).
const EditTools = "write_file|edit|notebook_edit"

// settings: Qwen Code reads one settings file per project,
// .qwen/settings.json (local and project alike), and the user's
// $QWEN_HOME/settings.json (~/.qwen).
func settings(s kind.Scope) (string, string) {
	if s.Name == "user" {
		return home(s.Getenv), "settings.json"
	}
	return s.Top, ".qwen/settings.json"
}

// home is Qwen Code's own folder: $QWEN_HOME (a leading ~ is the home
// folder, as Qwen Code reads it), else ~/.qwen.
func home(getenv func(string) string) string {
	dir := getenv("QWEN_HOME")
	switch {
	case dir == "":
		return filepath.Join(getenv("HOME"), ".qwen")
	case dir == "~" || strings.HasPrefix(dir, "~/"):
		return filepath.Join(getenv("HOME"), dir[1:])
	}
	return dir
}

// EditedPaths returns the file a write_file, edit or notebook_edit call
// names (file_path, notebook_path: absolute), or nil.
func EditedPaths(tool string, input json.RawMessage) []string {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	switch {
	case (tool == "write_file" || tool == "edit") && in.FilePath != "":
		return []string{in.FilePath}
	case tool == "notebook_edit" && in.NotebookPath != "":
		return []string{in.NotebookPath}
	}
	return nil
}
