package statefile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// OpenDir and its walk alike: a link or a file on the way is refused and
// named, nothing is made through it, and what is missing is made.
func TestOpenDir_RefusesLinksEitherWay(t *testing.T) {
	for _, walk := range []bool{false, true} {
		t.Run(map[bool]string{false: "openat2", true: "walk"}[walk], func(t *testing.T) {
			open := OpenDir
			if walk {
				open = WalkDir
			}
			dir := tempDir(t)
			outside := filepath.Join(dir, "outside")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "top", "a"), 0o755))
			require.NoError(t, os.Mkdir(outside, 0o755))
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "top", "a", "link")))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "top", "file"), nil, 0o644))
			base, err := unix.Open(filepath.Join(dir, "top"), unix.O_PATH|unix.O_DIRECTORY, 0)
			require.NoError(t, err)
			defer unix.Close(base)

			for at, kind := range map[string]string{"a/link": "symbolic link", "file": "regular file"} {
				_, err := open(base, at+"/x", unix.O_PATH, MkdirMode(0o755, unix.O_PATH))
				var nr *NotRegularError
				require.ErrorAs(t, err, &nr, at)
				assert.Equal(t, at, nr.Path)
				assert.Equal(t, kind, nr.Kind)
			}
			entries, _ := os.ReadDir(outside)
			assert.Empty(t, entries, "nothing made through the link")

			_, err = open(base, "b/c", unix.O_PATH, nil)
			assert.ErrorIs(t, err, os.ErrNotExist)
			fd, err := open(base, "b/c", unix.O_RDONLY, MkdirMode(0o755, unix.O_PATH))
			require.NoError(t, err)
			unix.Close(fd)
			fi, err := os.Lstat(filepath.Join(dir, "top", "b", "c"))
			require.NoError(t, err)
			assert.True(t, fi.IsDir())
		})
	}
}
