package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstall runs ./install.sh as a user does, into a temporary prefix,
// then uses what it installed: git finds the subcommands on PATH, and
// git venom-rollback --help reaches the installed man page. A second run,
// with --prefix overriding PREFIX, must leave the same files.
func TestInstall(t *testing.T) {
	t.Parallel()
	requireInstallable(t)
	prefix := filepath.Join(t.TempDir(), "prefix")

	first := runInstall(t, []string{"PREFIX=" + prefix})
	assert.Regexp(t, `(?m)^git-venom-checkpoint \S+\n\z`, first, "install.sh ends with git venom-checkpoint --version")
	assert.NotContains(t, first, "man does not find the pages")
	// Without bash-completion, bash completes no git command: say so.
	if bashCompletionInstalled() {
		assert.NotContains(t, first, "bash-completion is missing")
	} else {
		assert.Contains(t, first, "install.sh: bash-completion is missing, so bash completes no git command; apt-get install bash-completion\n")
	}
	installed := listTree(t, prefix)
	want := []string{"bin/git-venom", "share/man/man1/git-venom.1"}
	for _, bin := range manBinaries {
		want = append(want, "bin/"+bin, "share/man/man1/"+bin+".1",
			"share/bash-completion/completions/"+bin, "share/zsh/site-functions/_"+bin,
			"share/fish/vendor_completions.d/"+bin+".fish")
	}
	want = append(want, "share/fish/vendor_conf.d/git-venom.fish")
	sort.Strings(want)
	assert.Equal(t, want, installed)
	same := map[string]string{"bin/git-venom": "bin/git-venom", "share/man/man1/git-venom.1": "man/git-venom.1",
		"share/fish/vendor_conf.d/git-venom.fish": "completion/git-venom-git.fish"}
	for _, bin := range manBinaries {
		same["share/man/man1/"+bin+".1"] = "man/" + bin + ".1"
		same["share/bash-completion/completions/"+bin] = "completion/git-venom.bash"
		same["share/zsh/site-functions/_"+bin] = "completion/git-venom.zsh"
		same["share/fish/vendor_completions.d/"+bin+".fish"] = "completion/git-venom.fish"
	}
	for dst, src := range same {
		got, err := os.ReadFile(filepath.Join(prefix, dst))
		require.NoError(t, err)
		wantBytes, err := os.ReadFile(filepath.Join(repoRoot(), src))
		require.NoError(t, err)
		assert.Equal(t, string(wantBytes), string(got), "installed %s", dst)
	}
	st, err := os.Stat(filepath.Join(prefix, "bin/git-venom"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "git-venom is executable")

	env := NewBareEnv(t)
	env.Extra = append(env.Extra, "PATH="+filepath.Join(prefix, "bin")+":"+gitDir+":/usr/bin:/bin")
	r := env.GitRaw("venom-checkpoint", "--version")
	r.OK(t)
	assert.Regexp(t, `^git-venom-checkpoint \S+\n$`, r.Stdout)
	// git venom alone is the installed overview, not "not a git command".
	overview := env.GitRaw("venom")
	overview.OK(t)
	assert.Contains(t, overview.Stdout, "git venom-rollback <checkpoint>")

	if _, err := exec.LookPath("man"); err == nil {
		help := env.run(env.Dir, []string{"MANPATH=" + filepath.Join(prefix, "share/man"), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80"},
			"git", "venom-rollback", "--help")
		help.OK(t)
		assert.Regexp(t, `(?m)^\s+git-venom-rollback - roll an agent's tree back`, help.Stdout)
		// git help venom opens the overview: git-venom on PATH makes git
		// look for man git-venom, not gitvenom.
		overview := env.run(env.Dir, []string{"MANPATH=" + filepath.Join(prefix, "share/man"), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80"},
			"git", "help", "venom")
		overview.OK(t)
		assert.Regexp(t, `(?m)^\s+git-venom - checkpoints and rollback`, overview.Stdout)
		// Without MANPATH, man-db finds the pages from PATH (bin/../share/man).
		where := env.run(env.Dir, nil, "man", "-w", "git-venom-rollback")
		where.OK(t)
		assert.Equal(t, filepath.Join(prefix, "share/man/man1/git-venom-rollback.1")+"\n", where.Stdout)
	} else {
		t.Log("man is not installed: the --help check is skipped (tests/run installs man-db)")
	}

	// A release build ignores the test knobs (lib/testhook/off.go): the
	// fault points fail nothing and no profile is written.
	env.Write("a.txt", "a\n")
	profile := filepath.Join(env.Root, "cpu.prof")
	knobs := []string{"VENOM_TEST_FAIL_AT=capture-scan,commit-write,ref-create,log-append",
		"VENOM_TEST_CPUPROFILE=" + profile, "VENOM_TEST_TIMINGS=" + profile}
	env.run(env.Dir, knobs, "git", "venom-checkpoint", "--agent=a1").OK(t)
	assert.NoFileExists(t, profile, "a release binary wrote a test profile")
	refs := env.run(env.Dir, nil, "git", "for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/")
	refs.OK(t)
	assert.Equal(t, "refs/venom/checkpoints/a1/1\n", refs.Stdout, "the checkpoint ignores VENOM_TEST_FAIL_AT")

	// Again, with --prefix winning over PREFIX: idempotent, and the
	// environment's prefix untouched.
	ignored := filepath.Join(t.TempDir(), "ignored")
	runInstall(t, []string{"PREFIX=" + ignored}, "--prefix", prefix)
	assert.Equal(t, installed, listTree(t, prefix), "a second run changes the set of installed files")
	assert.NoDirExists(t, ignored, "--prefix must win over PREFIX")
	r = env.GitRaw("venom-checkpoint", "--version")
	r.OK(t)
}

// TestInstall_SaysWhatToInstall: without root, a missing libgit2 is named
// with the exact command to install it, and nothing is built.
func TestInstall_SaysWhatToInstall(t *testing.T) {
	t.Parallel()
	fake := t.TempDir()
	write := func(name, script string) {
		require.NoError(t, os.WriteFile(filepath.Join(fake, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	}
	write("id", `echo 1000`)
	write("pkg-config", `exit 1`)
	prefix := filepath.Join(t.TempDir(), "prefix")
	cmd := exec.Command(filepath.Join(repoRoot(), "install.sh"), "--prefix", prefix)
	cmd.Env = append(installEnviron(), "PATH="+fake+":"+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "install.sh must fail:\n%s%s", out.String(), errb.String())
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, errb.String(), "apt-get install -y")
	assert.Contains(t, errb.String(), "libgit2-dev")
	assert.NotContains(t, out.String(), "building")
	assert.Empty(t, listTree(t, prefix), "nothing is installed")
}

// requireInstallable skips only where install.sh cannot work by design: not
// root, so it cannot apt-get, and libgit2-dev is missing.
func requireInstallable(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if exec.Command("pkg-config", "--exists", "libgit2 >= 1.5", "libgit2 < 1.6").Run() != nil {
		t.Skip("not root and libgit2-dev (1.5) is missing: install.sh would stop and ask for apt-get install libgit2-dev pkg-config")
	}
}

// installEnviron is the caller's environment, which keeps Go's caches (a
// cold cgo build takes minutes), without what would make commands look like
// an agent's or point git elsewhere.
func installEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "VENOM_"), strings.HasPrefix(name, "GIT_"), strings.HasPrefix(name, "CODEX_"),
			name == "CLAUDECODE", name == "PREFIX", name == "MANPATH":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runInstall runs ./install.sh from another folder and returns its stdout.
func runInstall(t *testing.T, extra []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(), "install.sh"), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(installEnviron(), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "install.sh %s:\n%s%s", strings.Join(args, " "), out.String(), errb.String())
	return out.String()
}

// listTree lists the files under dir, relative and sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, rel)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(files)
	return files
}

// bashCompletionInstalled tells whether Debian's bash-completion package,
// which loads git's completion and ours, is on this machine.
func bashCompletionInstalled() bool {
	for _, f := range []string{"/usr/share/bash-completion/bash_completion", "/etc/bash_completion"} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return exec.Command("pkg-config", "--exists", "bash-completion").Run() == nil
}
