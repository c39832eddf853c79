package gitfiles

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is a repository with a linked worktree, a HOME, an XDG folder and
// spare config files, every place List can name holding a file that git
// would notice: a config key, an attribute, an ignore pattern of its own.
type world struct {
	root, home, xdg, repo, linked string
	system, global                string // for GIT_CONFIG_SYSTEM, GIT_CONFIG_GLOBAL
}

func run(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), "git %v: %s", args, stderr.String())
	return out.String()
}

// baseEnv is the process environment without the variables List follows.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") || name == "HOME" || name == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func newWorld(t *testing.T) *world {
	root := t.TempDir()
	w := &world{root: root, home: filepath.Join(root, "home"), xdg: filepath.Join(root, "xdg"),
		repo: filepath.Join(root, "repo"), linked: filepath.Join(root, "linked"),
		system: filepath.Join(root, "system.gitconfig"), global: filepath.Join(root, "global.gitconfig")}
	env := append(baseEnv(), "HOME="+w.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	run(t, root, env, "init", "-q", w.repo)
	require.NoError(t, os.WriteFile(filepath.Join(w.repo, "f"), nil, 0o644))
	run(t, w.repo, env, "add", "f")
	run(t, w.repo, env, "commit", "-qm", "f")
	run(t, w.repo, env, "worktree", "add", "-q", w.linked)
	return w
}

// mark is the name that the file at path sets: a config key, an
// attribute, an ignored name of its own.
func mark(path string) string {
	return fmt.Sprintf("m%08x", crc32.ChecksumIEEE([]byte(path)))
}

// fill adds to every path of list, outside /etc, a line that git would
// notice: a config key, an attribute set on every path, an ignore pattern.
func fill(t *testing.T, list []File) {
	for _, f := range list {
		if strings.HasPrefix(f.Path, "/etc/") {
			continue // the machine's own: left alone
		}
		var line string
		switch f.Kind {
		case Config:
			line = "[list]\n\t" + mark(f.Path) + " = 1\n"
		case Attributes:
			line = "* " + mark(f.Path) + "\n"
		case Exclude:
			line = mark(f.Path) + "\n"
		}
		old, err := os.ReadFile(f.Path)
		if err == nil && bytes.Contains(old, []byte(line)) {
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(f.Path), 0o755))
		require.NoError(t, os.WriteFile(f.Path, append(old, line...), 0o644))
	}
}

// gitReads lists the files of list that git reads in dir under env: the
// config files git config --show-origin names, the attributes files whose
// attribute git check-attr sets, the exclude files whose name git
// check-ignore ignores.
func gitReads(t *testing.T, dir string, env []string, list []File) []string {
	// "file:<path>\0key\nvalue\0", the path relative to dir for the
	// repository's own files.
	origins := map[string]bool{}
	for _, tok := range strings.Split(run(t, dir, env, "config", "--list", "--show-origin", "-z"), "\x00") {
		if p, ok := strings.CutPrefix(tok, "file:"); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			origins[p] = true
		}
	}
	attrs := run(t, dir, env, "check-attr", "-a", "f")
	var names []string
	for _, f := range list {
		names = append(names, mark(f.Path))
	}
	cmd := exec.Command("git", append([]string{"check-ignore", "--no-index"}, names...)...)
	cmd.Dir, cmd.Env = dir, env
	ignored, _ := cmd.Output() // exit 1: nothing ignored
	var read []string
	for _, f := range list {
		if strings.HasPrefix(f.Path, "/etc/") {
			continue
		}
		var yes bool
		switch f.Kind {
		case Config:
			yes = origins[f.Path]
		case Attributes:
			yes = strings.Contains(attrs, ": "+mark(f.Path)+": set\n")
		case Exclude:
			yes = strings.Contains("\n"+string(ignored), "\n"+mark(f.Path)+"\n")
		}
		if yes {
			read = append(read, f.Path)
		}
	}
	sort.Strings(read)
	return read
}

func readPaths(list []File) []string {
	var out []string
	for _, f := range list {
		if f.Read && !strings.HasPrefix(f.Path, "/etc/") {
			out = append(out, f.Path)
		}
	}
	sort.Strings(out)
	return out
}

// List's read files are the ones git reads, config, attributes and
// excludes, in a main and a linked worktree, whichever scope the
// environment selects.
func TestList_ReadFilesAreTheOnesGitReads(t *testing.T) {
	w := newWorld(t)
	cases := map[string][]string{
		"home":            {"HOME=" + w.home},
		"xdg":             {"HOME=" + w.home, "XDG_CONFIG_HOME=" + w.xdg},
		"global":          {"HOME=" + w.home, "XDG_CONFIG_HOME=" + w.xdg, "GIT_CONFIG_GLOBAL=" + w.global},
		"system":          {"HOME=" + w.home, "GIT_CONFIG_SYSTEM=" + w.system},
		"system nosystem": {"HOME=" + w.home, "GIT_CONFIG_SYSTEM=" + w.system, "GIT_CONFIG_NOSYSTEM=1"},
		"nosystem false":  {"HOME=" + w.home, "GIT_CONFIG_SYSTEM=" + w.system, "GIT_CONFIG_NOSYSTEM=false"},
		"no home":         {"GIT_CONFIG_NOSYSTEM=1"},
	}
	for name, extra := range cases {
		for _, top := range []string{w.repo, w.linked} {
			t.Run(name+" "+filepath.Base(top), func(t *testing.T) {
				env := append(baseEnv(), extra...)
				gitDir := strings.TrimSpace(run(t, top, env, "rev-parse", "--absolute-git-dir"))
				common := strings.TrimSpace(run(t, top, env, "rev-parse", "--path-format=absolute", "--git-common-dir"))
				list, exact := List(Repo{Top: top, GitDir: gitDir, CommonDir: common, Env: env})
				require.True(t, exact)
				fill(t, list)
				assert.Equal(t, gitReads(t, top, env, list), readPaths(list))
				// The ones git might read otherwise are listed too.
				assert.Greater(t, len(list), len(readPaths(list)))
			})
		}
	}
}

// Without a repository the list is the system and global files alone, as
// the settings reader takes them.
func TestList_WithoutARepository(t *testing.T) {
	env := []string{"HOME=/h", "GIT_CONFIG_NOSYSTEM=1"}
	list, exact := List(Repo{Env: env})
	require.True(t, exact)
	var configs []string
	for _, f := range list {
		assert.NotEqual(t, Local, f.Scope)
		if f.Kind == Config && f.Read {
			configs = append(configs, f.Path)
		}
	}
	assert.Equal(t, []string{"/h/.config/git/config", "/h/.gitconfig"}, configs)
}

// What git might read otherwise than the list says makes it inexact.
func TestList_InexactWhenTheEnvironmentIsUnusual(t *testing.T) {
	for name, env := range map[string][]string{
		"GIT_CONFIG_PARAMETERS":    {"HOME=/h", "GIT_CONFIG_PARAMETERS='a.b'='c'"},
		"GIT_DIR":                  {"HOME=/h", "GIT_DIR=/x"},
		"empty HOME":               {"HOME="},
		"empty GIT_CONFIG_GLOBAL":  {"HOME=/h", "GIT_CONFIG_GLOBAL="},
		"empty GIT_CONFIG_SYSTEM":  {"HOME=/h", "GIT_CONFIG_SYSTEM="},
		"relative global":          {"HOME=/h", "GIT_CONFIG_GLOBAL=rel"},
		"relative HOME":            {"HOME=h"},
		"NOSYSTEM as a number":     {"HOME=/h", "GIT_CONFIG_NOSYSTEM=2"},
		"GIT_ATTR_NOSYSTEM is not": {"HOME=/h", "GIT_ATTR_NOSYSTEM=1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, exact := List(Repo{Env: env})
			assert.False(t, exact)
		})
	}
}

// Run as git venom-*, PATH starts with git's exec path, whose git is the
// same program: the list is the one of a run straight from the shell, so
// that a cache keyed on it holds whichever way the command ran, and the
// system files read are still the ones git reads.
func TestList_SameUnderGitsExecPath(t *testing.T) {
	w := newWorld(t)
	env := append(baseEnv(), "HOME="+w.home)
	gitDir := strings.TrimSpace(run(t, w.repo, env, "rev-parse", "--absolute-git-dir"))
	common := strings.TrimSpace(run(t, w.repo, env, "rev-parse", "--path-format=absolute", "--git-common-dir"))
	r := Repo{Top: w.repo, GitDir: gitDir, CommonDir: common, Env: env}
	plain, exact := List(r)
	require.True(t, exact)
	execPath := strings.TrimSpace(run(t, w.repo, env, "--exec-path"))
	t.Setenv("PATH", execPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	under, exact := List(r)
	require.True(t, exact)
	assert.Equal(t, plain, under)
	fill(t, under)
	assert.Equal(t, gitReads(t, w.repo, env, under), readPaths(under))
}

// gitSysconfDir keeps its answer for the PATH it was found on only: a
// process that changes PATH finds the git on the new one.
func TestSysconfDir_FollowsPATH(t *testing.T) {
	prefix := func(name string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.MkdirAll(filepath.Join(p, "bin"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(p, "bin", "git"), []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	a, b := prefix("a"), prefix("b")
	for _, p := range []string{a, b, a} {
		t.Setenv("PATH", filepath.Join(p, "bin"))
		dir, known := gitSysconfDir()
		require.True(t, known)
		assert.Equal(t, filepath.Join(p, "etc"), dir)
	}
}
