package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hook uninstall codex takes back the trust install recorded in the
// user's config.toml ([hooks.state."<key>"] trusted_hash, through Codex's
// own writer) and nothing the person wrote there: their comment, their
// own hooks' trust, their project trust. The file ends as it began, for
// an untrusted project (whose hooks' keys Codex computes as if trusted)
// and for a trusted one, at both scopes: byte for byte but for an empty
// [hooks.state] header, which Codex's writer adds when install first
// writes into a table the file held only implicitly, and which means
// nothing in TOML.
func TestRealCodex_UninstallRemovesItsTrust(t *testing.T) {
	e := NewEnv(t)
	c := e.UseRealCodex(t)
	config := filepath.Join(c.Home, "config.toml")
	mine := "\n# the person's own\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:0123\"\n"
	f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(mine)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	roundTrip := func(scope string) {
		t.Helper()
		before, err := os.ReadFile(config)
		require.NoError(t, err)
		e.Venom("checkpoint", "hook", "install", "codex", scope).OK(t)
		during, err := os.ReadFile(config)
		require.NoError(t, err)
		require.Equal(t, strings.Count(string(before), "trusted_hash")+4, strings.Count(string(during), "trusted_hash"), "%s", during)

		r := e.Venom("checkpoint", "hook", "uninstall", "codex", scope).OK(t)
		assert.Contains(t, r.Stdout, "Removed Codex's trust in these 4 hooks")
		assert.Empty(t, r.Stderr)
		after, err := os.ReadFile(config)
		require.NoError(t, err)
		assert.Equal(t, withoutEmptyTables(before), withoutEmptyTables(after), "%s: uninstall leaves the config.toml install found", scope)

		// Nothing left to take back: a second uninstall changes nothing.
		e.Venom("checkpoint", "hook", "uninstall", "codex", scope).OK(t)
		again, err := os.ReadFile(config)
		require.NoError(t, err)
		assert.Equal(t, string(after), string(again))
	}
	roundTrip("--scope=local") // an untrusted project
	c.trustProject(t)
	roundTrip("--scope=local")
	roundTrip("--scope=user")
	cfg, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Contains(t, string(cfg), mine)
	assert.Contains(t, string(cfg), "[projects."+strconv.Quote(e.Dir)+"]")
}

// withoutEmptyTables drops the TOML table headers that hold no key (the
// next line that is neither blank nor a comment is another header, or
// there is none), and the blank lines right after them.
func withoutEmptyTables(b []byte) string {
	lines := strings.Split(string(b), "\n")
	noKey := func(l string) bool { l = strings.TrimSpace(l); return l == "" || strings.HasPrefix(l, "#") }
	var out []string
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "[") {
			j := i + 1
			for j < len(lines) && noKey(lines[j]) {
				j++
			}
			if j == len(lines) || strings.HasPrefix(lines[j], "[") {
				for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "" {
					i++
				}
				continue
			}
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}
