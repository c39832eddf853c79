package tests

import (
	"os"
	"path/filepath"

	"github.com/stretchr/testify/require"
)

// Outside makes Root/outside, a folder beside the repository that no
// command may change (the victim of the security tests), holding files
// (name → content; a name may hold folders), and returns its path.
func (e *Env) Outside(files map[string]string) string {
	e.t.Helper()
	dir := filepath.Join(e.Root, "outside")
	require.NoError(e.t, os.MkdirAll(dir, 0o755))
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(e.t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// OutsideFile is Outside with one file, and returns the file's path.
func (e *Env) OutsideFile(name, content string) string {
	e.t.Helper()
	return filepath.Join(e.Outside(map[string]string{name: content}), name)
}

// precious names files for Outside, each holding "precious <name>\n".
func precious(names ...string) map[string]string {
	files := map[string]string{}
	for _, n := range names {
		files[n] = "precious " + n + "\n"
	}
	return files
}
