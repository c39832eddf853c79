package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CommonDir and gitDirs answer as git rev-parse does in every layout a
// test makes, reading it themselves in the plain ones.
func TestEnv_CommonDirIsGits(t *testing.T) {
	cases := map[string]struct {
		setup func(e *Env)
		plain bool
	}{
		"plain":    {func(e *Env) {}, true},
		"detached": {func(e *Env) { e.Git("checkout", "-q", "--detach") }, true},
		"HEAD not a ref": {func(e *Env) {
			require.NoError(t, os.WriteFile(filepath.Join(e.Dir, ".git", "HEAD"), []byte("ref: heads/main\n"), 0o644))
		}, false},
		"linked worktree": {func(e *Env) {
			wt := filepath.Join(e.Root, "wt")
			e.Git("worktree", "add", "-q", wt)
			e.Dir = wt
		}, false},
		"gitfile": {func(e *Env) {
			e.Git("init", "-q", "--separate-git-dir", filepath.Join(e.Root, "sep.git"))
		}, false},
		".git a link": {func(e *Env) {
			real := filepath.Join(e.Root, "real.git")
			require.NoError(t, os.Rename(filepath.Join(e.Dir, ".git"), real))
			require.NoError(t, os.Symlink(real, filepath.Join(e.Dir, ".git")))
		}, false},
		"commondir file": {func(e *Env) {
			other := NewEnv(t)
			require.NoError(t, os.WriteFile(filepath.Join(e.Dir, ".git", "commondir"), []byte(filepath.Join(other.Dir, ".git")+"\n"), 0o644))
		}, false},
		"GIT_DIR": {func(e *Env) {
			other := NewEnv(t)
			e.Extra = append(e.Extra, "GIT_DIR="+filepath.Join(other.Dir, ".git"))
		}, false},
		"GIT_INDEX_FILE": {func(e *Env) {
			e.Extra = append(e.Extra, "GIT_INDEX_FILE="+filepath.Join(e.Root, "other.index"))
		}, false},
		"GIT_COMMON_DIR": {func(e *Env) {
			other := NewEnv(t)
			e.Extra = append(e.Extra, "GIT_COMMON_DIR="+filepath.Join(other.Dir, ".git"))
		}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := NewEnv(t)
			c.setup(e)
			_, plain := plainCommonDir(e.Dir, e.Environ())
			assert.Equal(t, c.plain, plain, "read without git")
			r := e.GitRaw("rev-parse", "--path-format=absolute", "--git-common-dir")
			if r.Code != 0 {
				assert.False(t, plain, "git finds no repository: %s", r.Stderr)
				return
			}
			assert.Equal(t, filepath.Clean(r.Stdout[:len(r.Stdout)-1]), e.CommonDir())
			dirs := e.GitRaw("rev-parse", "--absolute-git-dir", "--path-format=absolute",
				"--git-common-dir", "--git-path", "index")
			gitDir, common, index := e.gitDirs()
			assert.Equal(t, dirs.Stdout, gitDir+"\n"+common+"\n"+index+"\n", "gitDirs")
		})
	}
}
