package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/statefile"
)

// core.sharedRepository is read from every scope, the repository's own
// config included, the last value winning, as git reads it: in process
// in the plain case, through git otherwise (GIT_CONFIG_PARAMETERS, an
// include). git config --get is the oracle.
func TestSharedRepository_AgreesWithGit(t *testing.T) {
	cases := []struct {
		name    string
		global  string
		local   string
		environ []string
		want    statefile.Shared
	}{
		{"unset", "", "", nil, statefile.SharedUmask},
		{"repository", "", "group", nil, statefile.SharedGroup},
		{"global", "all", "", nil, statefile.SharedEverybody},
		{"repository over global", "all", "0640", nil, statefile.Shared(-0o640)},
		{"command line over all", "all", "group",
			[]string{"GIT_CONFIG_PARAMETERS='core.sharedrepository'='umask'"}, statefile.SharedUmask},
		{"include", "[include]\n\tpath = more", "", nil, statefile.SharedGroup},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := plainEnv(t)
			dir := newRepo(t, env)
			home := ""
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "HOME="); ok {
					home = v
				}
			}
			global := ""
			switch {
			case c.name == "include":
				require.NoError(t, os.WriteFile(filepath.Join(home, "more"), []byte("[core]\n\tsharedRepository = group\n"), 0o644))
				global = c.global + "\n"
			case c.global != "":
				global = "[core]\n\tsharedRepository = " + c.global + "\n"
			}
			require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(global), 0o644))
			if c.local != "" {
				runGit(t, dir, env, "config", "core.sharedRepository", c.local)
			}
			env = append(env, c.environ...)
			r, err := Open(context.Background(), dir, env)
			require.NoError(t, err)
			got, err := r.sharedRepository()
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			if c.name != "unset" {
				fromGit, err := statefile.ParseShared(runGit(t, dir, env, "config", "--get", "core.sharedRepository"), true)
				require.NoError(t, err)
				assert.Equal(t, fromGit, got, "git config --get")
			}
		})
	}
}
