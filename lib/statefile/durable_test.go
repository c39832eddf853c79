package statefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// ReadDirNames lists a state folder, lists nothing for a missing one, and
// refuses a link in place of the folder, as Open does.
func TestReadDirNames_LinkFree(t *testing.T) {
	dir := tempDir(t)
	names, err := ReadDirNames(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Empty(t, names)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "real"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real", "a"), nil, 0o644))
	names, err = ReadDirNames(filepath.Join(dir, "real"))
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, names)
	require.NoError(t, os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")))
	_, err = ReadDirNames(filepath.Join(dir, "link"))
	var nr *NotRegularError
	require.True(t, errors.As(err, &nr), "%v", err)
}

// WriteDurable replaces a link at its path, never writes through it, and
// leaves no temporary file.
func TestWriteDurable_ReplacesALink(t *testing.T) {
	dir := tempDir(t)
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	p := filepath.Join(dir, "state", "merge")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.Symlink(target, p))
	require.NoError(t, WriteDurable(p, []byte("new"), 0o644))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b))
	b, err = ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
	names, err := ReadDirNames(filepath.Dir(p))
	require.NoError(t, err)
	require.Equal(t, []string{"merge"}, names)
}
