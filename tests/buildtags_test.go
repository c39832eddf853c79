package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/tests/buildtags"
)

// TestMain_BinariesLinkedAsInstalled: the binaries the tests run are built
// with the tags GOFLAGS names (lib/static/env.sh's static libgit2, the
// link install.sh makes) as well as venomtest, not venomtest alone, which
// replaces them.
func TestMain_BinariesLinkedAsInstalled(t *testing.T) {
	t.Parallel()
	want := buildtags.With(os.Getenv("GOFLAGS"), "venomtest")
	for _, name := range []string{"git-venom-checkpoint", "git-venom-rollback", "git-venom-diff"} {
		got, err := buildtags.Of(filepath.Join(binDir, name))
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
}
