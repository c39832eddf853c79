package clitest

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
)

// Store returns a store with default settings on the repository at dir
// (already made by git init), its state folder made, for the unit tests
// of the packages between lib/state and the commands. Git reads neither
// the person's global nor the system settings, so a test sees only what
// it sets. The repository is freed when the test ends.
func Store(t *testing.T, dir string) *state.Store {
	t.Helper()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	r, err := repo.Open(context.Background(), dir, env)
	require.NoError(t, err)
	t.Cleanup(r.Free)
	require.NoError(t, os.MkdirAll(r.StateDir, 0o755))
	return &state.Store{Repo: r, Config: config.Defaults(), Environ: env}
}
