package opencode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/harness/kind"
)

// write and edit name their file in filePath; apply_patch in its patch's
// headers; the plugin's filepath (from the result's metadata) stands in
// for a missing filePath; bash and everything else name none.
func TestEditedPaths(t *testing.T) {
	assert.Equal(t, []string{"/r/a.txt"}, EditedPaths("write", json.RawMessage(`{"filePath":"/r/a.txt","content":"x"}`)))
	assert.Equal(t, []string{"/r/a.txt"}, EditedPaths("edit", json.RawMessage(`{"filePath":"/r/a.txt","oldString":"a","newString":"b"}`)))
	assert.Equal(t, []string{"/r/m.txt"}, EditedPaths("edit", json.RawMessage(`{"filepath":"/r/m.txt"}`)))
	assert.Equal(t, []string{"a", "b"}, EditedPaths("apply_patch",
		json.RawMessage(`{"patchText":"*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch"}`)))
	assert.Nil(t, EditedPaths("bash", json.RawMessage(`{"command":"echo > x","filePath":"/r/x"}`)))
	assert.Nil(t, EditedPaths("read", json.RawMessage(`{"filePath":"/r/a.txt"}`)))
	assert.Nil(t, EditedPaths("write", json.RawMessage(`{"filePath":7}`)))
	assert.Nil(t, EditedPaths("write", json.RawMessage(`not json`)))
}

// The plugin file install writes is git-venom's; any change to it is
// "changed"; another file under its name is "foreign".
func TestStateOf(t *testing.T) {
	for _, argv := range [][]string{
		{"git", "venom-checkpoint", "hook", "opencode"},
		{"git", "venom-checkpoint", "hook", "opencode", "--agent=x", "--isolation=shared"},
	} {
		text := PluginText(argv)
		assert.Equal(t, "ours", StateOf(text), "%s", argv)
		assert.True(t, strings.HasPrefix(string(text), Marker))
		assert.Contains(t, string(text), "const command = ")
		assert.NotContains(t, string(text), "COMMAND")
		assert.Equal(t, "changed", StateOf(append(text, '\n')))
		assert.Equal(t, "changed", StateOf([]byte(strings.Replace(string(text), "session.idle", "session.busy", 1))))
	}
	assert.Equal(t, "foreign", StateOf([]byte("export const Mine = async () => ({})\n")))
	assert.Equal(t, "foreign", StateOf(nil))
	assert.Equal(t, "missing", State(filepath.Join(t.TempDir(), "none.js")))
}

// The plugin's command line is a JSON array: a word with a quote or a
// backslash cannot break out of it.
func TestPluginText_QuotesTheCommand(t *testing.T) {
	text := string(PluginText([]string{"git", "venom-checkpoint", "hook", "opencode", "--agent=a\"b\\c\n`"}))
	assert.Contains(t, text, `const command = ["git","venom-checkpoint","hook","opencode","--agent=a\"b\\c\n`+"`"+`"]`+"\n")
	assert.Equal(t, 1, strings.Count(text, "--agent="), "the command is written once")
	assert.Equal(t, "ours", StateOf([]byte(text)))
}

// A rewind through turn t forks before the next turn of t's session: a
// turn of another session in between does not count; after the session's
// last turn, the whole session is copied.
func TestForkPoint(t *testing.T) {
	a := &agents.Agent{Turns: []*agents.Turn{
		{ID: "t1", Session: "ses_a", HarnessTurn: "msg_1"},
		{ID: "t2", Session: "ses_b", HarnessTurn: "msg_2"},
		{ID: "t3", Session: "ses_a", HarnessTurn: "msg_3"},
	}}
	assert.Equal(t, "msg_3", ForkPoint(a, a.Turns[0]))
	assert.Equal(t, "", ForkPoint(a, a.Turns[1]))
	assert.Equal(t, "", ForkPoint(a, a.Turns[2]))
	assert.True(t, Adapter{}.CanRewind(a, a.Turns[0]))
	assert.False(t, Adapter{}.CanRewind(a, &agents.Turn{ID: "t9", HarnessTurn: "msg_9"}), "no session")
}

// Recorded payloads of the plugin (tests/testdata/hooks/opencode) name
// their paths as EditedPaths reads them.
func TestRecordedPayloads(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "tests", "testdata", "hooks", "opencode", "hooks")
	b, err := os.ReadFile(filepath.Join(dir, "tool-after-write.json"))
	require.NoError(t, err)
	var p struct {
		Tool  string          `json:"tool_name"`
		Input json.RawMessage `json:"tool_input"`
	}
	require.NoError(t, json.Unmarshal(b, &p))
	assert.Equal(t, []string{"/tmp/oc/repo/c.txt"}, EditedPaths(p.Tool, p.Input))
}

// FuzzEditedPaths: any input names only non-empty paths, each once.
func FuzzEditedPaths(f *testing.F) {
	f.Add("write", []byte(`{"filePath":"/r/a"}`))
	f.Add("apply_patch", []byte(`{"patchText":"*** Add File: a\n*** Add File: a\n*** Delete File: b"}`))
	f.Add("edit", []byte(`{"filepath":""}`))
	f.Add("bash", []byte(`{"command":"x"}`))
	f.Fuzz(func(t *testing.T, tool string, input []byte) {
		seen := map[string]bool{}
		for _, p := range EditedPaths(tool, input) {
			assert.NotEmpty(t, p)
			assert.False(t, seen[p], "%q twice", p)
			seen[p] = true
		}
	})
}

// FuzzStateOf: no file is taken for git-venom's plugin unless it is one
// install writes.
func FuzzStateOf(f *testing.F) {
	f.Add(PluginText([]string{"git", "venom-checkpoint", "hook", "opencode"}))
	f.Add([]byte(Marker + "\nconst command = [\"x\"]\n"))
	f.Add([]byte(Marker + "\nconst command = [1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		switch StateOf(data) {
		case "ours":
			m := commandLine().FindSubmatch(data)
			require.NotNil(t, m)
			var argv []string
			require.NoError(t, json.Unmarshal(m[1], &argv))
			assert.Equal(t, string(PluginText(argv)), string(data))
		case "changed":
			assert.True(t, strings.HasPrefix(string(data), Marker))
		case "foreign":
			assert.False(t, strings.HasPrefix(string(data), Marker))
		default:
			t.Fatal("no such state")
		}
	})
}

// doctor's check: nothing installed is ok; the plugin install writes is
// ok; an edited one warns; OPENCODE_PURE and, for the repository's
// plugin, OPENCODE_DISABLE_PROJECT_CONFIG warn; agents without a plugin
// warn.
func TestChecks(t *testing.T) {
	top, home := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	run := func(st *agents.State) kind.Finding {
		f := checks(context.Background(), kind.Doctor{Top: top, Getenv: func(k string) string { return env[k] }, State: st})
		require.Len(t, f, 1)
		assert.Equal(t, CheckID, f[0].ID)
		return f[0]
	}
	assert.Equal(t, "ok", run(nil).Status)
	withAgent := &agents.State{Agents: map[string]*agents.Agent{"opencode": {ID: "opencode", Harness: Name}},
		Order: []string{"opencode"}}
	if f := run(withAgent); assert.Equal(t, "warn", f.Status) {
		assert.Contains(t, f.Message, "no git-venom plugin")
		assert.Equal(t, "git venom-checkpoint hook install opencode", f.Fix)
	}
	path := filepath.Join(top, ".opencode", "plugins", PluginName)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	text := PluginText([]string{"git", "venom-checkpoint", "hook", "opencode"})
	require.NoError(t, os.WriteFile(path, text, 0o644))
	assert.Equal(t, "ok", run(withAgent).Status)
	env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1"
	assert.Contains(t, run(nil).Message, "OPENCODE_DISABLE_PROJECT_CONFIG")
	delete(env, "OPENCODE_DISABLE_PROJECT_CONFIG")
	env["OPENCODE_PURE"] = "true"
	assert.Contains(t, run(nil).Message, "OPENCODE_PURE")
	delete(env, "OPENCODE_PURE")
	require.NoError(t, os.WriteFile(path, append(text, "// mine\n"...), 0o644))
	if f := run(nil); assert.Equal(t, "warn", f.Status) {
		assert.Contains(t, f.Message, "was changed")
	}
}
