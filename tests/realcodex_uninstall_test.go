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
// own writer) and nothing the person wrote there: the file ends byte for
// byte as it began, for an untrusted and a trusted project, at both
// scopes (install writes each entry on its own, so Codex adds no
// [hooks.state] header: TestRealCodex_UninstallLeavesNoEmptyTable).
func TestRealCodex_UninstallRemovesItsTrust(t *testing.T) {
	t.Parallel()
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
		assert.Equal(t, string(before), string(after), "%s: uninstall leaves the config.toml install found", scope)

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

// TestRealCodex_UninstallLeavesNoEmptyTable: install into a config.toml
// that has no [hooks.state] table, then uninstall, gives back the file
// byte for byte: no empty [hooks.state] header is left behind. A person's
// own empty [hooks.state] table stays, as does one holding their entries.
func TestRealCodex_UninstallLeavesNoEmptyTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, mine string }{
		{"none", ""},
		{"their empty table", "\n[hooks.state]\n"},
		{"their entry", "\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:0123\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := NewEnv(t)
			c := e.UseRealCodex(t)
			c.trustProject(t)
			config := filepath.Join(c.Home, "config.toml")
			f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(tc.mine)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			before, err := os.ReadFile(config)
			require.NoError(t, err)
			for _, scope := range []string{"--scope=local", "--scope=user"} {
				e.Venom("checkpoint", "hook", "install", "codex", scope).OK(t)
				during, err := os.ReadFile(config)
				require.NoError(t, err)
				require.Equal(t, strings.Count(string(before), "trusted_hash")+4, strings.Count(string(during), "trusted_hash"), "%s", during)
				e.Venom("checkpoint", "hook", "uninstall", "codex", scope).OK(t)
				after, err := os.ReadFile(config)
				require.NoError(t, err)
				assert.Equal(t, string(before), string(after), "%s: uninstall gives back the config.toml install found\nduring:\n%s", scope, during)
			}
		})
	}
}
