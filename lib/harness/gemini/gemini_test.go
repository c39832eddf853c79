package gemini

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// write_file and replace name the file they change in file_path; every
// other tool, or an input without it, names none.
func TestEditedPaths_WriteFileAndReplace(t *testing.T) {
	in := json.RawMessage(`{"file_path":"/work/repo/src/a.go","content":"package a\n"}`)
	assert.Equal(t, []string{"/work/repo/src/a.go"}, EditedPaths("write_file", in))
	assert.Equal(t, []string{"/r/b.txt"}, EditedPaths("replace",
		json.RawMessage(`{"file_path":"/r/b.txt","old_string":"x","new_string":"y"}`)))
	assert.Nil(t, EditedPaths("run_shell_command", json.RawMessage(`{"command":"rm -rf x","file_path":"/r/x"}`)))
	assert.Nil(t, EditedPaths("read_file", in))
	assert.Nil(t, EditedPaths("write_file", json.RawMessage(`{"content":"x"}`)))
	assert.Nil(t, EditedPaths("write_file", json.RawMessage(`{"file_path":7}`)))
	assert.Nil(t, EditedPaths("write_file", json.RawMessage(`not json`)))
	// The matcher install writes for AfterTool names exactly these tools.
	for _, e := range Kind.Events {
		if e.Name == "AfterTool" {
			assert.Equal(t, "write_file|replace", e.Matcher)
		}
	}
}

// The project's and local scope write the repository's
// .gemini/settings.json; the user scope $GEMINI_CLI_HOME/.gemini, else
// $HOME/.gemini.
func TestSettings_ByScope(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	root, name := Kind.Settings(kind.Scope{Name: "project", Top: "/repo", Getenv: env(nil)})
	assert.Equal(t, []string{"/repo", ".gemini/settings.json"}, []string{root, name})
	root, name = Kind.Settings(kind.Scope{Name: "local", Top: "/repo", Getenv: env(nil)})
	assert.Equal(t, []string{"/repo", ".gemini/settings.json"}, []string{root, name})
	root, name = Kind.Settings(kind.Scope{Name: "user", Top: "/repo", Getenv: env(map[string]string{"HOME": "/h"})})
	assert.Equal(t, []string{"/h/.gemini", "settings.json"}, []string{root, name})
	root, _ = Kind.Settings(kind.Scope{Name: "user", Top: "/repo",
		Getenv: env(map[string]string{"HOME": "/h", "GEMINI_CLI_HOME": "/g"})})
	assert.Equal(t, "/g/.gemini", root)
}

// A command run from Gemini CLI's shell has GEMINI_CLI=1; its events map
// onto the hook's turn start, turn end and edit.
func TestKind_CallerAndAliases(t *testing.T) {
	assert.True(t, Kind.Marked(func(k string) string { return map[string]string{"GEMINI_CLI": "1"}[k] }))
	assert.False(t, Kind.Marked(func(string) string { return "" }))
	assert.False(t, Kind.Marked(func(k string) string { return map[string]string{"GEMINI_CLI": "0"}[k] }))
	assert.Equal(t, "UserPromptSubmit", Kind.Aliases["BeforeAgent"])
	assert.Equal(t, "Stop", Kind.Aliases["AfterAgent"])
	assert.Equal(t, "PostToolUse", Kind.Aliases["AfterTool"])
	assert.Nil(t, Kind.Rewind, "Gemini CLI cannot be rewound from outside: files only")
}
