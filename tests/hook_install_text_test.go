package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hook install edits the person's settings file as
// text, touching only git-venom's entries, and uninstall gives back what
// was there, byte for byte; with nothing installed, uninstall writes
// nothing at all.

// homeAndTree lists every file and folder of the work tree (but .git) and
// of HOME, with the files' bytes: what hook install or uninstall changed.
func homeAndTree(t *testing.T, env *Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range []string{env.Dir, env.Home} {
		require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if fi.IsDir() && fi.Name() == ".git" {
				return filepath.SkipDir
			}
			if fi.IsDir() {
				out[p] = "dir"
				return nil
			}
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		}))
	}
	return out
}

func TestHookUninstall_NothingInstalledWritesNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".claude/settings.json", "{\"model\": \"sonnet\"}\n") // the project scope's, not local's
	before := homeAndTree(t, env)
	for _, args := range [][]string{
		{"claude-code"}, {"gemini-cli"}, {"codex"}, {"qwen-code"},
		{"claude-code", "--scope=user"}, {"gemini-cli", "--scope=user"}, {"codex", "--scope=user"},
		{"qwen-code", "--scope=user"}, {"claude-code", "--scope=project"},
	} {
		r := env.Venom("checkpoint", append([]string{"hook", "uninstall"}, args...)...).OK(t)
		assert.Equal(t, before, homeAndTree(t, env), "%v wrote", args)
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			// A path too long for the line stands on the next one.
			assert.True(t, strings.HasPrefix(line, "Nothing to remove: ") || strings.HasPrefix(line, "  /"),
				"%v: %s", args, r.Stdout)
		}
		j := env.Venom("checkpoint", append([]string{"hook", "uninstall", "--json"}, args...)...).OK(t).Map(t)
		for _, f := range j["files"].([]any) {
			assert.Equal(t, "none", f.(map[string]any)["action"], "%v", args)
			assert.Equal(t, false, f.(map[string]any)["changed"], "%v", args)
		}
	}
	assert.Contains(t, env.Venom("checkpoint", "hook", "uninstall", "claude-code", "--scope=project").OK(t).Stdout,
		namedLine("Nothing to remove: "+env.Path(".claude/settings.json")+" holds no git-venom hooks.",
			"Nothing to remove: no git-venom hooks in", env.Path(".claude/settings.json")))
}

// Files as people and the harnesses write them; each is installed into
// and uninstalled from, and must come back byte for byte, with the
// person's own text untouched in between.
var settingsAsWritten = []struct {
	name, harness, file, text string
	kept                      []string // verbatim in the installed file
}{
	{"claude compact entries", "claude-code", ".claude/settings.local.json",
		`{"permissions": {"allow": ["Bash(ls:*)"]}, "model": "sonnet"}`,
		[]string{`{"permissions": {"allow": ["Bash(ls:*)"]}, "model": "sonnet", "hooks": {`}},
	{"claude empty hooks", "claude-code", ".claude/settings.local.json",
		"{\n  \"hooks\": {},\n  \"model\": \"sonnet\"\n}\n",
		[]string{"\n  \"model\": \"sonnet\"\n}\n"}},
	{"claude other hooks of an event", "claude-code", ".claude/settings.local.json", settingsWithOtherHooks,
		[]string{"\"command\": \"npx prettier --write \\\"$CLAUDE_FILE_PATHS\\\"\""}},
	{"gemini comments", "gemini-cli", ".gemini/settings.json",
		"// my Gemini settings\n{\n    \"model\": {\"name\": \"gemini-2.5-pro\"}, // fast enough\n    /* tools */\n    \"tools\": {\"sandbox\": false}\n}\n",
		[]string{"// my Gemini settings\n{\n    \"model\": {\"name\": \"gemini-2.5-pro\"}, // fast enough\n    /* tools */\n    \"tools\": {\"sandbox\": false},\n    \"hooks\": {\n        \"SessionStart\": ["}},
	// As Qwen Code leaves the user's file after its own migration ($version).
	{"qwen comments and version", "qwen-code", ".qwen/settings.json",
		"{\n  // mine\n  \"model\": {\"name\": \"qwen3-coder-plus\"},\n  \"$version\": 4\n}\n",
		[]string{"{\n  // mine\n  \"model\": {\"name\": \"qwen3-coder-plus\"},\n  \"$version\": 4,\n  \"hooks\": {\n    \"SessionStart\": ["}},
	{"codex tabs and CRLF", "codex", ".codex/hooks.json",
		"{\r\n\t\"hooks\": {\r\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\r\n\t}\r\n}\r\n",
		[]string{"\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}, {\"hooks\": [{\"type\": \"command\", \"command\": \"git venom-checkpoint hook codex\", \"timeout\": 40}]}]"}},
}

func TestHookInstall_EditsOnlyItsEntries(t *testing.T) {
	t.Parallel()
	for _, tc := range settingsAsWritten {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write(tc.file, tc.text)
			before := homeAndTree(t, env)
			env.Venom("checkpoint", "hook", "install", tc.harness).OK(t)
			installed := env.Read(tc.file)
			for _, k := range tc.kept {
				assert.Contains(t, installed, k)
			}
			assert.Contains(t, installed, "git venom-checkpoint hook "+tc.harness)
			again := env.Venom("checkpoint", "hook", "install", tc.harness).OK(t)
			assert.Contains(t, again.Stdout, "lready as it should be")
			assert.Equal(t, installed, env.Read(tc.file), "installing again changes nothing")
			env.Venom("checkpoint", "hook", "uninstall", tc.harness).OK(t)
			assert.Equal(t, before, homeAndTree(t, env), "uninstall gave back the bytes:\n%s", env.Read(tc.file))
		})
	}
}

// Install into no file, then uninstall: every file and folder install
// made is gone, in the repository and in HOME, Codex's config.toml too.
func TestHookInstall_UninstallRemovesWhatItMade(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	before := homeAndTree(t, env)
	for _, args := range [][]string{
		{"claude-code"}, {"claude-code", "--scope=project"}, {"gemini-cli"}, {"codex"},
		{"claude-code", "--scope=user"}, {"gemini-cli", "--scope=user"}, {"codex", "--scope=user", "--via=both"},
		{"qwen-code"}, {"qwen-code", "--scope=user"},
	} {
		env.Venom("checkpoint", append([]string{"hook", "install"}, args...)...).OK(t)
		assert.NotEqual(t, before, homeAndTree(t, env), "%v installed", args)
		env.Venom("checkpoint", append([]string{"hook", "uninstall"}, args...)...).OK(t)
		assert.Equal(t, before, homeAndTree(t, env), "%v: uninstall left something", args)
	}
	assert.Empty(t, env.Git("status", "--porcelain", "--ignored"))
}

// A file that is not JSON is refused with the line and column, and left
// alone; Claude Code's settings take no comments (it reads plain JSON).
func TestHookInstall_ParseErrorNamesLineAndColumn(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	bad := "{\n  \"model\": \"sonnet\",\n}\n"
	env.Write(".claude/settings.local.json", bad)
	r := env.Venom("checkpoint", "hook", "install", "claude-code").Fails(t, 2, "invalid_params.config")
	assert.Contains(t, r.Stderr, env.Path(".claude/settings.local.json")+" is not valid JSON: line 3, column 1:")
	j := env.Venom("checkpoint", "hook", "install", "claude-code", "--json").Fails(t, 2, "invalid_params.config").Map(t)
	data := j["error"].(map[string]any)["data"].(map[string]any)
	assert.Equal(t, "3", data["line"])
	assert.Equal(t, "1", data["column"])
	env.Write(".claude/settings.local.json", "{\n  // mine\n}\n")
	r = env.Venom("checkpoint", "hook", "install", "claude-code").Fails(t, 2, "invalid_params.config")
	assert.Contains(t, r.Stderr, "line 2, column 3: unexpected '/'")
	assert.Equal(t, "{\n  // mine\n}\n", env.Read(".claude/settings.local.json"))
}

// --dry-run names each file and what would happen to it; --json carries
// the content; install codex's dry run says what the real one does of
// Codex's trust.
func TestHookInstall_DryRunNamesTheFile(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	before := homeAndTree(t, env)
	path := env.Path(".claude/settings.local.json")
	r := env.Venom("checkpoint", "hook", "install", "claude-code", "--dry-run").OK(t)
	named := namedLine("Would create "+path+":", "Would create:", path)
	assert.True(t, strings.HasPrefix(r.Stdout, named+"\n{\n  \"hooks\": {"), r.Stdout)
	j := env.Venom("checkpoint", "hook", "install", "claude-code", "--dry-run", "--json").OK(t).Map(t)
	f := j["files"].([]any)[0].(map[string]any)
	assert.Equal(t, path, f["file"])
	assert.Equal(t, "create", f["action"])
	assert.Equal(t, strings.TrimPrefix(r.Stdout, named+"\n"), f["content"])

	r = env.Venom("checkpoint", "hook", "install", "codex", "--dry-run").OK(t)
	hooks := env.Path(".codex/hooks.json")
	assert.Contains(t, r.Stdout, namedLine("Would create "+hooks+":", "Would create:", hooks)+"\n")
	assert.Contains(t, r.Stderr, "note: Codex runs no hook it does not trust")
	assert.Contains(t, r.Stderr, "trust_level = \"trusted\"")
	j = env.Venom("checkpoint", "hook", "install", "codex", "--dry-run", "--json").OK(t).Map(t)
	assert.Contains(t, j["warning"], "Codex runs no hook it does not trust")
	assert.Equal(t, before, homeAndTree(t, env), "a dry run writes nothing")

	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	r = env.Venom("checkpoint", "hook", "uninstall", "claude-code", "--dry-run").OK(t)
	assert.Equal(t, namedLine("Would remove "+path+", which holds only git-venom's hooks.",
		"Would remove this file, which holds only git-venom's hooks:", path)+"\n", r.Stdout)
	assert.FileExists(t, path)
}

// namedLine is a line naming path as hook install prints it: line where
// it fits 80 columns, else lead with the path alone on the next line.
func namedLine(line, lead, path string) string {
	if utf8.RuneCountInString(line) <= 80 {
		return line
	}
	return lead + "\n  " + path
}
