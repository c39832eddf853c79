// Package gemini is git-venom's Gemini CLI side: its hook events, the
// settings file install writes, its file-editing tools and the marks of its
// shell. Gemini CLI has no way for another program to rewind a session
// (its /restore works inside the program, on its own checkpoints), so a
// rollback of a gemini-cli agent restores files only.
package gemini

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// Kind is Gemini CLI to git-venom (harness.Kinds).
var Kind = kind.Kind{
	Name:  "gemini-cli",
	Title: "Gemini CLI",
	Agent: "gemini",
	Help:  "Run as a Gemini CLI hook: the event's JSON on stdin.",
	// Gemini CLI sets GEMINI_CLI=1 in the commands its shell tool runs.
	Marks: [][]string{{"GEMINI_CLI=1"}},
	// SessionEnd is left out: Gemini CLI does not wait for its hooks.
	Events: []kind.Event{{Name: "SessionStart"}, {Name: "BeforeAgent"},
		{Name: "AfterTool", Matcher: "write_file|replace"}, {Name: "AfterAgent"}},
	PerToolMatcher: "write_file|replace|run_shell_command",
	Aliases: map[string]string{
		"BeforeAgent": "UserPromptSubmit", // a prompt is submitted: a turn starts
		"AfterAgent":  "Stop",             // the agent's answer is done: the turn ends
		"AfterTool":   "PostToolUse",
	},
	PromptContext: "BeforeAgent",
	Edits:         EditedPaths,
	Settings:      settings,
	Checks:        checks,
	TimeoutMillis: true,
	// Gemini CLI strips comments before JSON.parse (strip-json-comments).
	SettingsComments: true,
	Tested:           "0.61.0",
}

// checks is doctor's check of the hooks in Gemini CLI's settings files.
func checks(_ context.Context, in kind.Doctor) []kind.Finding {
	return []kind.Finding{kind.CheckSettingsHooks(in, HooksCheckID)}
}

// HooksCheckID is doctor's check of git-venom's hooks in Gemini CLI's
// settings files (kind.CheckSettingsHooks).
const HooksCheckID = "harness.gemini-cli.hooks"

// settings: Gemini CLI reads one settings file per project,
// .gemini/settings.json (local and project alike), and the user's
// $GEMINI_CLI_HOME/.gemini/settings.json (~/.gemini).
func settings(s kind.Scope) (string, string) {
	if s.Name == "user" {
		home := s.Getenv("GEMINI_CLI_HOME")
		if home == "" {
			home = s.Getenv("HOME")
		}
		return filepath.Join(home, ".gemini"), "settings.json"
	}
	return s.Top, ".gemini/settings.json"
}

// EditedPaths returns the file a write_file or replace call names (its
// file_path, absolute), or nil.
func EditedPaths(tool string, input json.RawMessage) []string {
	if tool != "write_file" && tool != "replace" {
		return nil
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(input, &in) == nil && in.FilePath != "" {
		return []string{in.FilePath}
	}
	return nil
}
