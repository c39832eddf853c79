package qwen

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// write_file and edit name their file in file_path, notebook_edit in
// notebook_path (the inputs Qwen Code 0.24.4 declares); the shell and
// everything else name none.
func TestEditedPaths(t *testing.T) {
	assert.Equal(t, []string{"/r/a.txt"}, EditedPaths("write_file", json.RawMessage(`{"file_path":"/r/a.txt","content":"x"}`)))
	assert.Equal(t, []string{"/r/a.txt"}, EditedPaths("edit",
		json.RawMessage(`{"file_path":"/r/a.txt","old_string":"a","new_string":"b","replace_all":false}`)))
	assert.Equal(t, []string{"/r/n.ipynb"}, EditedPaths("notebook_edit",
		json.RawMessage(`{"notebook_path":"/r/n.ipynb","new_source":"x"}`)))
	assert.Nil(t, EditedPaths("notebook_edit", json.RawMessage(`{"file_path":"/r/n.ipynb"}`)))
	assert.Nil(t, EditedPaths("run_shell_command", json.RawMessage(`{"command":"echo > x","file_path":"/r/x"}`)))
	assert.Nil(t, EditedPaths("read_file", json.RawMessage(`{"file_path":"/r/a.txt"}`)))
	assert.Nil(t, EditedPaths("write_file", json.RawMessage(`{"file_path":7}`)))
	assert.Nil(t, EditedPaths("write_file", json.RawMessage(`not json`)))
	// The edit event's matcher names exactly the tools EditedPaths reads.
	for _, e := range Kind.Events {
		if e.Name == "PostToolUse" {
			assert.Equal(t, "write_file|edit|notebook_edit", e.Matcher)
		}
	}
	assert.Equal(t, "write_file|edit|notebook_edit|run_shell_command", Kind.PerToolMatcher)
}

// The local and project scopes write the repository's
// .qwen/settings.json; the user scope $QWEN_HOME/settings.json (a
// leading ~ is the home folder), else ~/.qwen/settings.json.
func TestSettings_ByScope(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, scope := range []string{"local", "project"} {
		root, name := Kind.Settings(kind.Scope{Name: scope, Top: "/repo", Getenv: env(nil)})
		assert.Equal(t, []string{"/repo", ".qwen/settings.json"}, []string{root, name}, scope)
	}
	root, name := Kind.Settings(kind.Scope{Name: "user", Top: "/repo", Getenv: env(map[string]string{"HOME": "/h"})})
	assert.Equal(t, []string{"/h/.qwen", "settings.json"}, []string{root, name})
	root, _ = Kind.Settings(kind.Scope{Name: "user", Getenv: env(map[string]string{"HOME": "/h", "QWEN_HOME": "/q"})})
	assert.Equal(t, "/q", root)
	root, _ = Kind.Settings(kind.Scope{Name: "user", Getenv: env(map[string]string{"HOME": "/h", "QWEN_HOME": "~/cfg"})})
	assert.Equal(t, "/h/cfg", root)
}

// A command run from Qwen Code's shell tool has QWEN_CODE=1; Qwen Code
// cannot be rewound from outside, so a rollback is files only.
func TestKind_CallerAndFilesOnly(t *testing.T) {
	assert.True(t, Kind.Marked(func(k string) string { return map[string]string{"QWEN_CODE": "1"}[k] }))
	assert.False(t, Kind.Marked(func(string) string { return "" }))
	assert.False(t, Kind.Marked(func(k string) string { return map[string]string{"QWEN_CODE": "0"}[k] }))
	assert.Nil(t, Kind.Rewind, "files only")
	assert.Empty(t, Kind.Aliases, "Qwen Code's events are Claude Code's")
	assert.True(t, Kind.SettingsComments)
	assert.False(t, Kind.TimeoutMillis, "Qwen Code's command hook timeouts are seconds")
}

// doctor's check: nothing installed is ok, unless the repository has
// qwen-code agents; git-venom's hooks (in a file with comments) are ok;
// disableAllHooks, QWEN_CODE_SAFE_MODE and QWEN_CODE_SIMPLE warn; hooks
// in the repository's file only, with folder trust on and the folder not
// trusted, warn.
func TestChecks(t *testing.T) {
	top, home := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	run := func(st *agents.State) kind.Finding {
		f := checks(context.Background(), kind.Doctor{Top: top, Getenv: func(k string) string { return env[k] }, State: st})
		require.Len(t, f, 1)
		assert.Equal(t, CheckID, f[0].ID)
		return f[0]
	}
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	assert.Equal(t, "ok", run(nil).Status)
	withAgent := &agents.State{Agents: map[string]*agents.Agent{"qwen": {ID: "qwen", Harness: Name}},
		Order: []string{"qwen"}}
	if f := run(withAgent); assert.Equal(t, "warn", f.Status) {
		assert.Contains(t, f.Message, "no git-venom hooks")
		assert.Equal(t, "git venom-checkpoint hook install qwen-code", f.Fix)
	}
	project := filepath.Join(top, ".qwen", "settings.json")
	ours := `{
  // git-venom's
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "git venom-checkpoint hook qwen-code", "timeout": 30}]}]}`
	write(project, ours+"}\n")
	assert.Equal(t, "ok", run(withAgent).Status)
	// Another harness's command, or a longer name, is not ours.
	write(project, `{"hooks":{"Stop":[{"hooks":[{"command":"git venom-checkpoint hook qwen-codex"}]}]}}`)
	assert.Equal(t, "warn", run(withAgent).Status)

	write(project, ours+`, "disableAllHooks": true}`)
	if f := run(nil); assert.Equal(t, "warn", f.Status) {
		assert.Contains(t, f.Message, "disableAllHooks is true in "+project)
	}
	// The project's false wins over the user's true.
	user := filepath.Join(home, ".qwen", "settings.json")
	write(user, `{"disableAllHooks": true}`)
	write(project, ours+`, "disableAllHooks": false}`)
	assert.Equal(t, "ok", run(nil).Status)
	write(project, ours+"}")
	assert.Contains(t, run(nil).Message, "disableAllHooks is true in "+user)
	write(user, `{}`)

	for _, v := range []string{"QWEN_CODE_SAFE_MODE", "QWEN_CODE_SIMPLE"} {
		env[v] = "true"
		assert.Contains(t, run(nil).Message, v)
		delete(env, v)
	}

	// Folder trust on: the repository's file is read only when trusted.
	write(user, `{"security": {"folderTrust": {"enabled": true}}}`)
	if f := run(nil); assert.Equal(t, "warn", f.Status) {
		assert.Contains(t, f.Message, "is not trusted")
	}
	trust := filepath.Join(home, ".qwen", "trustedFolders.json")
	write(trust, `{"`+top+`": "TRUST_FOLDER"}`)
	assert.Equal(t, "ok", run(nil).Status)
	// Installed for the user too: trust does not matter.
	write(trust, `{}`)
	write(user, `{"security": {"folderTrust": {"enabled": true}}, "hooks": {"Stop": [{"hooks": [{"command": "git venom-checkpoint hook qwen-code --agent=q"}]}]}}`)
	assert.Equal(t, "ok", run(nil).Status)
}

// Trust rules as Qwen Code reads them: the deepest rule whose folder
// holds the folder decides; DO_NOT_TRUST wins a tie; TRUST_PARENT trusts
// the rule's parent folder; no rule is not trusted.
func TestTrusted(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "trust.json")
	getenv := func(k string) string {
		return map[string]string{"HOME": home, "QWEN_CODE_TRUSTED_FOLDERS_PATH": path}[k]
	}
	for _, c := range []struct {
		rules string
		dir   string
		want  bool
	}{
		{`{}`, "/w/r", false},
		{`{"/w/r": "TRUST_FOLDER"}`, "/w/r", true},
		{`{"/w/r": "TRUST_FOLDER"}`, "/w/r/sub", true},
		{`{"/w/r": "TRUST_FOLDER"}`, "/w/rx", false},
		{`{"/w": "TRUST_FOLDER", "/w/r": "DO_NOT_TRUST"}`, "/w/r", false},
		{`{"/w": "DO_NOT_TRUST", "/w/r": "TRUST_FOLDER"}`, "/w/r", true},
		{`{"/w/r/x": "TRUST_PARENT"}`, "/w/r", true},
		{`{"/w/r/x": "TRUST_PARENT", "/w/r": "DO_NOT_TRUST"}`, "/w/r", false},
		{`{"/": "TRUST_FOLDER"}`, "/w/r", true},
		{`{"/w/r": "SOMETHING"}`, "/w/r", false},
		{`// comments
		{"/w/r": "TRUST_FOLDER",}`, "/w/r", false}, // a trailing comma: not JSON with comments either
	} {
		require.NoError(t, os.WriteFile(path, []byte(c.rules), 0o644))
		assert.Equal(t, c.want, trusted(getenv, c.dir), "%s %s", c.rules, c.dir)
	}
	// A rule names the folder through a link, or the folder is reached
	// through one: the same folder.
	target := filepath.Join(home, "real")
	require.NoError(t, os.Mkdir(target, 0o755))
	link := filepath.Join(home, "link")
	require.NoError(t, os.Symlink(target, link))
	for _, c := range [][2]string{{link, target}, {target, link}} {
		require.NoError(t, os.WriteFile(path, []byte(`{"`+c[0]+`": "TRUST_FOLDER"}`), 0o644))
		assert.True(t, trusted(getenv, c[1]), "rule %s, folder %s", c[0], c[1])
	}
}
