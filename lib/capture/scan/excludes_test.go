package scan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/repo"
)

// globalExcludes reads core.excludesFile and core.ignorecase in process
// only where that is what git config --path says, on configs written to
// trip a reader: every case gives git's answer, and the plain ones are
// read without git.
func TestGlobalExcludes_SameAsGit(t *testing.T) {
	cases := []struct {
		name, global, local string
		env                 []string
		inProcess           bool
	}{
		{"none", "", "", nil, true},
		{"absolute", "[core]\n\texcludesFile = /x/ignore\n", "", nil, true},
		{"home", "[core]\n\texcludesfile = ~/ig nore\n", "", nil, true},
		{"home alone", "[core]\n\texcludesfile = ~\n", "", nil, true},
		{"home slash", "", "[core]\n\texcludesfile = ~/x\n", []string{"HOME=/h/"}, true},
		{"home empty", "", "[core]\n\texcludesfile = ~/x\n", []string{"HOME="}, false},
		{"home unset", "", "[core]\n\texcludesfile = ~/x\n", []string{"HOME"}, true},
		{"relative", "[core]\n\texcludesfile = rel/ignore\n", "", nil, true},
		{"empty", "[core]\n\texcludesfile =\n", "", nil, true},
		{"no equals", "[core]\n\texcludesfile\n", "", nil, true},
		{"local wins", "[core]\n\texcludesfile = /g\n", "[CORE]\n\tExcludesFile = \"/l \\\"q\\\"\" ; c\n", nil, true},
		{"earlier no equals", "[core]\n\texcludesfile\n", "[core]\n\texcludesfile = /l\n", nil, true},
		{"continued", "[core]\n\texcludesfile = /a\\\n/b # c\n", "", nil, true},
		{"subsection", "[core \"x\"]\n\texcludesfile = /x\n[core.y]\n\texcludesfile = /y\n", "", nil, true},
		{"ignorecase true", "", "[core]\n\tignorecase = true\n", nil, true},
		{"ignorecase FALSE", "", "[core]\n\tignorecase = FALSE\n", nil, true},
		{"ignorecase no", "[core]\n\tignorecase = no\n", "[core]\n\tignorecase = 0\n", nil, true},
		{"ignorecase bare", "", "[core]\n\tignorecase\n", nil, true},
		{"ignorecase home", "", "[core]\n\tignorecase = ~/false\n", nil, true},
		{"other user", "[core]\n\texcludesfile = ~root/x\n", "", nil, false},
		{"no such user", "[core]\n\texcludesfile = ~nosuchuser9/x\n", "", nil, false},
		{"prefix", "[core]\n\texcludesfile = %(prefix)/x\n", "", nil, false},
		{"include", "[include]\n\tpath = inc\n", "", nil, false},
		{"includeIf", "[includeIf \"gitdir:/\"]\n\tpath = inc\n", "", nil, false},
		{"-c", "", "", []string{"GIT_CONFIG_PARAMETERS='core.excludesfile'='/c'"}, false},
		{"GIT_CONFIG_COUNT", "", "", []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.ignorecase", "GIT_CONFIG_VALUE_0=true"}, false},
		{"worktree config", "", "[extensions]\n\tworktreeConfig = true\n", nil, false},
		{"syntax", "[core\n\texcludesfile = /x\n", "", nil, false},
	}
	fixture := filepath.Join(t.TempDir(), "repo")
	gittest.Run(t, filepath.Dir(fixture), "", nil, "init", "-q", fixture)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			home, dir := filepath.Join(root, "home"), filepath.Join(root, "repo")
			require.NoError(t, os.MkdirAll(home, 0o755))
			gittest.CopyTree(t, fixture, dir)
			require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(c.global), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(home, "inc"), []byte("[core]\n\texcludesfile = /inc\n"), 0o644))
			if c.local != "" {
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString(c.local)
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			environ := []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "LANG=C"}
			extra := map[string]string{"HOME": home}
			for _, kv := range c.env { // a bare NAME unsets it
				k, v, set := strings.Cut(kv, "=")
				if !set {
					delete(extra, k)
					continue
				}
				extra[k] = v
			}
			for k, v := range extra {
				environ = append(environ, k+"="+v)
			}
			ctx := context.Background()
			r, err := repo.Open(ctx, dir, environ)
			require.NoError(t, err)
			defer r.Free()

			got, ok := globalExcludes(ctx, r)
			wantFile, wantOK := gitExcludesFile(ctx, r)
			var want []string
			if wantOK {
				want = excludeFiles(r, wantFile)
			}
			assert.Equal(t, wantOK, ok, "git config says the scan can run")
			assert.Equal(t, want, got)
			entries, plain := r.ConfigFiles("core.excludesfile", "core.ignorecase")
			_, known, _ := excludesIn(entries, r.Files().Env)
			assert.Equal(t, c.inProcess, plain && known, "read without git")
		})
	}
}
