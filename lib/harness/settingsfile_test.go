package harness

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// followBeneath resolves a link as os.Root does: a ".." above the root or
// an absolute target escapes, even when the path would come back in.
func TestFollowBeneath(t *testing.T) {
	top := filepath.Join(t.TempDir(), "top")
	require.NoError(t, os.MkdirAll(filepath.Join(top, "tools", "claude"), 0o755))
	for link, target := range map[string]string{
		"in": "tools/claude", "chain": "in", "up": "tools/..", "self": ".",
		"outin": "../top/tools", "abs": top, "gone": "nowhere", "loop": "loop",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(top, link)))
	}
	root, err := unix.Open(top, unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	for link, want := range map[string]string{"in": "tools/claude", "chain": "tools/claude", "up": ".", "self": "."} {
		got, err := followBeneath(root, link)
		assert.NoError(t, err, link)
		assert.Equal(t, want, got, link)
	}
	for link, want := range map[string]error{"outin": errEscapes, "abs": errEscapes, "gone": unix.ENOENT, "loop": unix.ELOOP} {
		_, err := followBeneath(root, link)
		assert.ErrorIs(t, err, want, link)
	}
}
