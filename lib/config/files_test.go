package config

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
)

// world is a HOME with a ~/.gitconfig, an XDG config file and a system
// file, and a repository whose own config sets keys that must not count.
type world struct {
	home, xdg, system, repo string
}

func newWorld(t *testing.T) world {
	root := t.TempDir()
	w := world{home: filepath.Join(root, "home"), xdg: filepath.Join(root, "xdg"),
		system: filepath.Join(root, "etc-gitconfig"), repo: filepath.Join(root, "repo")}
	for _, d := range []string{w.home, filepath.Join(w.xdg, "git"), w.repo} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	cmd := exec.Command("git", "init", "-q", w.repo)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	write(t, filepath.Join(w.repo, ".git", "config"), "[venom]\n\tkeep = 1\n\tkeepFor = 1d\n")
	return w
}

func write(t *testing.T, path, text string) {
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// env is a plain environment for the world, plus extra.
func (w world) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") || name == "HOME" || name == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+w.home), extra...)
}

// viaGit is what git config says of the world.
func (w world) viaGit(env []string) (Config, error) {
	g := &gitcli.Runner{Dir: w.repo, Env: append(gitcli.CleanEnv(env), "GIT_DIR="+filepath.Join(w.repo, ".git"))}
	return fromGit(context.Background(), g)
}

// inProcess is the in-process reading, which must answer.
func inProcess(t *testing.T, env []string) (Config, error) {
	t.Helper()
	keys, ok := fromFiles(env)
	require.True(t, ok, "a plain environment and plain files are read in process")
	c := Defaults()
	for _, kv := range keys {
		if err := c.setKey(kv[0], kv[1]); err != nil {
			return c, err
		}
	}
	return c, nil
}

// The in-process reading gives the Config git config gives: system, then
// the XDG file, then ~/.gitconfig, later values winning, the repository's
// own config never counting, and GIT_CONFIG_NOSYSTEM, GIT_CONFIG_SYSTEM,
// GIT_CONFIG_GLOBAL and XDG_CONFIG_HOME followed.
func TestFromFiles_AgreesWithGitConfig(t *testing.T) {
	w := newWorld(t)
	write(t, w.system, "[venom]\n\tkeep = 7\n\tmaxFileBytes = 2k\n")
	write(t, filepath.Join(w.xdg, "git", "config"), "[venom]\n\tkeep = 8\n\tkeepSafety = 3d\n")
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".config", "git"), 0o755))
	write(t, filepath.Join(w.home, ".config", "git", "config"), "[venom]\n\ttimeout = 9s\n")
	write(t, filepath.Join(w.home, ".gitconfig"),
		"[user]\n\tname = A \"B\"\n[Venom]\n\tKEEP = 9\n\trollbackNote = \"  note \" # c\n[venom \"sub\"]\n\tkeep = 99\n")
	other := filepath.Join(t.TempDir(), "other")
	write(t, other, "[venom]\n\tenabled = false\n")
	for name, env := range map[string][]string{
		"home":                  w.env(),
		"xdg":                   w.env("XDG_CONFIG_HOME=" + w.xdg),
		"system":                w.env("GIT_CONFIG_SYSTEM=" + w.system),
		"nosystem":              w.env("GIT_CONFIG_SYSTEM="+w.system, "GIT_CONFIG_NOSYSTEM=1"),
		"nosystem false":        w.env("GIT_CONFIG_SYSTEM="+w.system, "GIT_CONFIG_NOSYSTEM=false"),
		"global":                w.env("GIT_CONFIG_SYSTEM="+w.system, "GIT_CONFIG_GLOBAL="+other),
		"global /dev/null":      w.env("GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"),
		"no home":               w.env("GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Join(w.home, "missing")),
		"harmless git variable": w.env("GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=x", "GIT_SSL_CAINFO=/x"),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := w.viaGit(env)
			require.NoError(t, err)
			got, err := inProcess(t, env)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	// The cases are not all the defaults: the test would see a reader
	// that read nothing.
	got, _ := inProcess(t, w.env())
	assert.Equal(t, 9, got.Keep)
	assert.Equal(t, "  note ", got.RollbackNote)
}

// A bad value is the same error both ways.
func TestFromFiles_BadValueIsGitsError(t *testing.T) {
	w := newWorld(t)
	write(t, filepath.Join(w.home, ".gitconfig"), "[venom]\n\tkeep = lots\n")
	env := w.env("GIT_CONFIG_NOSYSTEM=1")
	_, gitErr := w.viaGit(env)
	_, err := inProcess(t, env)
	require.Error(t, err)
	require.Error(t, gitErr)
	assert.True(t, errcode.Is(err, errcode.InvalidParamsConfig))
	assert.Equal(t, gitErr.Error(), err.Error())
}

// What the reader cannot be sure of goes to git.
func TestFromFiles_LeavesTheUnusualToGit(t *testing.T) {
	w := newWorld(t)
	inc := filepath.Join(t.TempDir(), "inc")
	write(t, inc, "[venom]\n\tkeep = 4\n")
	cases := map[string]struct {
		gitconfig string
		env       []string
	}{
		"include":               {gitconfig: "[include]\n\tpath = " + inc + "\n"},
		"includeIf":             {gitconfig: "[includeIf \"gitdir:/\"]\n\tpath = " + inc + "\n"},
		"unreadable syntax":     {gitconfig: "[venom\n"},
		"GIT_CONFIG_PARAMETERS": {env: []string{"GIT_CONFIG_PARAMETERS='venom.keep'='4'"}},
		"GIT_CONFIG_COUNT":      {env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=venom.keep", "GIT_CONFIG_VALUE_0=4"}},
		"GIT_CONFIG":            {env: []string{"GIT_CONFIG=" + inc}},
		"GIT_DIR":               {env: []string{"GIT_DIR=/x"}},
		"NOSYSTEM as a number":  {env: []string{"GIT_CONFIG_NOSYSTEM=2"}},
		"empty HOME":            {env: []string{"HOME="}},
		"relative global":       {env: []string{"GIT_CONFIG_GLOBAL=rel"}},
		"global is a folder":    {env: []string{"GIT_CONFIG_GLOBAL=" + w.home}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			write(t, filepath.Join(w.home, ".gitconfig"), c.gitconfig)
			_, ok := fromFiles(w.env(append([]string{"GIT_CONFIG_NOSYSTEM=1"}, c.env...)...))
			assert.False(t, ok)
		})
	}
}
