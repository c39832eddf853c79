package repo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// plainEnv is an environment with no git variable but the harmless ones.
func plainEnv(t *testing.T) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "SUDO_") {
			env = append(env, kv)
		}
	}
	// GIT_EXEC_PATH is what git sets when it runs git venom-*.
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_EXEC_PATH=/usr/lib/git-core")
}

func runGit(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// copyRepo copies the repository newRepo made at src to a folder "repo"
// of a new temp dir, every file and folder with its mode, and returns it:
// a repository of the test's own, without the git calls that made one.
func copyRepo(t *testing.T, src string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dst := filepath.Join(root, "repo")
	gittest.CopyTree(t, src, dst)
	return dst
}

// newRepo makes a repository with one commit and a subfolder.
func newRepo(t *testing.T, env []string) string {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(root, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755))
	runGit(t, dir, env, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("x\n"), 0o644))
	runGit(t, dir, env, "add", "-A")
	runGit(t, dir, env, "-c", "user.email=t@t", "commit", "-qm", "init")
	return dir
}

// The in-process discovery finds what git finds, wherever it answers.
func TestDiscover_AgreesWithGit(t *testing.T) {
	env := plainEnv(t)
	dir := newRepo(t, env)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(filepath.Join(dir, "sub"), link))
	nested := filepath.Join(dir, "sub", "inner")
	require.NoError(t, os.MkdirAll(nested, 0o755))
	runGit(t, nested, env, "init", "-q")
	worktree := filepath.Join(filepath.Dir(dir), "wt")
	runGit(t, dir, env, "worktree", "add", "-q", worktree)
	require.NoError(t, os.MkdirAll(filepath.Join(worktree, "sub", "new"), 0o755))
	relative := filepath.Join(filepath.Dir(dir), "wt-relative")
	runGit(t, dir, env, "worktree", "add", "-q", relative)
	// A .git file with a relative path, as git worktree repair can leave.
	gd := runGit(t, relative, env, "rev-parse", "--absolute-git-dir")
	rel, err := filepath.Rel(relative, gd)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(relative, ".git"), []byte("gitdir: "+rel+"\n"), 0o644))

	for name, cwd := range map[string]string{
		"top":                       dir,
		"subfolder":                 filepath.Join(dir, "sub", "deeper"),
		"symlinked cwd":             link,
		"nested repo":               nested,
		"ignored folder":            filepath.Join(dir, "sub"),
		"linked worktree":           worktree,
		"linked worktree subfolder": filepath.Join(worktree, "sub", "new"),
		"relative .git file":        relative,
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := discover(cwd, env)
			require.True(t, ok, "a plain repository is found in process")
			want, err := discoverWithGit(context.Background(), cwd, env)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// Anything unusual goes to git: a case the in-process discovery answered
// would have to be proved equal to git's answer, and these are not.
func TestDiscover_LeavesTheUnusualToGit(t *testing.T) {
	base := plainEnv(t)
	cases := map[string]struct {
		env   []string
		setup func(t *testing.T, dir string) string // returns the cwd
	}{
		"GIT_DIR":                         {env: []string{"GIT_DIR=.git"}},
		"GIT_WORK_TREE":                   {env: []string{"GIT_WORK_TREE=."}},
		"GIT_INDEX_FILE":                  {env: []string{"GIT_INDEX_FILE=/tmp/x"}},
		"GIT_COMMON_DIR":                  {env: []string{"GIT_COMMON_DIR=.git"}},
		"GIT_CEILING_DIRECTORIES":         {env: []string{"GIT_CEILING_DIRECTORIES=/"}},
		"GIT_DISCOVERY_ACROSS_FILESYSTEM": {env: []string{"GIT_DISCOVERY_ACROSS_FILESYSTEM=1"}},
		"GIT_CONFIG_PARAMETERS":           {env: []string{"GIT_CONFIG_PARAMETERS='core.bare'='true'"}},
		"GIT_CONFIG_COUNT":                {env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.bare", "GIT_CONFIG_VALUE_0=true"}},
		"GIT_NAMESPACE":                   {env: []string{"GIT_NAMESPACE=x"}},
		"core.bare": {setup: func(t *testing.T, dir string) string {
			runGit(t, dir, base, "config", "core.bare", "true")
			return dir
		}},
		"core.worktree": {setup: func(t *testing.T, dir string) string {
			runGit(t, dir, base, "config", "core.worktree", dir)
			return dir
		}},
		"sha256 extension": {setup: func(t *testing.T, dir string) string {
			d := filepath.Join(filepath.Dir(dir), "sha256")
			runGit(t, filepath.Dir(dir), base, "init", "-q", "--object-format=sha256", d)
			return d
		}},
		"worktreeConfig extension": {setup: func(t *testing.T, dir string) string {
			runGit(t, dir, base, "config", "extensions.worktreeConfig", "true")
			return dir
		}},
		"include": {setup: func(t *testing.T, dir string) string {
			runGit(t, dir, base, "config", "include.path", "/dev/null")
			return dir
		}},
		"config git does not read": {setup: func(t *testing.T, dir string) string {
			f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, _ = f.WriteString("[core\n")
			require.NoError(t, f.Close())
			return dir
		}},
		"submodule": {setup: func(t *testing.T, dir string) string {
			sub := newRepo(t, base)
			runGit(t, dir, base, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")
			return filepath.Join(dir, "mod")
		}},
		"linked worktree with a worktree config": {setup: func(t *testing.T, dir string) string {
			wt := filepath.Join(filepath.Dir(dir), "wt")
			runGit(t, dir, base, "worktree", "add", "-q", wt)
			runGit(t, dir, base, "config", "extensions.worktreeConfig", "true")
			return wt
		}},
		"a .git file naming no repository": {setup: func(t *testing.T, dir string) string {
			d := filepath.Join(dir, "sub", "fake")
			require.NoError(t, os.MkdirAll(d, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(d, ".git"), []byte("gitdir: /nowhere\n"), 0o644))
			return d
		}},
		"inside .git": {setup: func(t *testing.T, dir string) string { return filepath.Join(dir, ".git", "refs") }},
		"bare repository": {setup: func(t *testing.T, dir string) string {
			d := filepath.Join(filepath.Dir(dir), "bare.git")
			runGit(t, filepath.Dir(dir), base, "init", "-q", "--bare", d)
			return d
		}},
		"symlinked .git": {setup: func(t *testing.T, dir string) string {
			d := filepath.Join(filepath.Dir(dir), "other")
			require.NoError(t, os.MkdirAll(d, 0o755))
			require.NoError(t, os.Symlink(filepath.Join(dir, ".git"), filepath.Join(d, ".git")))
			return d
		}},
		"empty .git folder": {setup: func(t *testing.T, dir string) string {
			d := filepath.Join(dir, "sub", "fake")
			require.NoError(t, os.MkdirAll(filepath.Join(d, ".git"), 0o755))
			return d
		}},
		"no repository": {setup: func(t *testing.T, dir string) string { return t.TempDir() }},
		"another owner": {setup: func(t *testing.T, dir string) string {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the folder away")
			}
			require.NoError(t, os.Chown(dir, 4242, 4242))
			return dir
		}},
		"sudo": {env: []string{"SUDO_UID=4242"}, setup: func(t *testing.T, dir string) string {
			if os.Geteuid() != 0 {
				t.Skip("SUDO_UID counts for root only")
			}
			return dir
		}},
	}
	// Each case gets a copy of one repository; a plain copy is found.
	fixture := newRepo(t, base)
	plain := copyRepo(t, fixture)
	if p, ok := discover(plain, base); !ok || p.Top != plain {
		t.Fatalf("a plain copy of the repository: %+v, %v", p, ok)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := copyRepo(t, fixture)
			cwd := dir
			if c.setup != nil {
				cwd = c.setup(t, dir)
			}
			env := append(append([]string{}, base...), c.env...)
			_, ok := discover(cwd, env)
			assert.False(t, ok, "git must judge this case")
		})
	}
}
