package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 12 item 3: nothing in the state folder is reached through a link,
// a FIFO or a device, and temporary files have names nobody can plant.

// stateDir is the repository's venom state folder, made if missing.
func stateDir(t *testing.T, env *Env) string {
	t.Helper()
	common := env.Git("rev-parse", "--path-format=absolute", "--git-common-dir")
	dir := filepath.Join(common, "venom")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// outsideFile is a file outside the repository, holding content.
func outsideFile(t *testing.T, env *Env, name, content string) string {
	t.Helper()
	dir := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// assertContent checks that a file still holds exactly content.
func assertContent(t *testing.T, path, content string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(b), "%s was written through a link", path)
}

// venomWithin runs a venom command that must end by itself within d: one
// still running then is killed and fails the test (a FIFO must never block).
func venomWithin(t *testing.T, env *Env, d time.Duration, cmd string, args ...string) Result {
	t.Helper()
	c := env.Command(nil, cmd, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// Its own process group, so that git's child dies with it.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, c.Start())
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return Result{Args: append([]string{"venom-" + cmd}, args...), Stdout: out.String(), Stderr: errb.String(), Code: code}
	case <-time.After(d):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("git venom-%s %v still running after %s: blocked on a FIFO?", cmd, args, d)
		return Result{}
	}
}

// failsNaming checks a failed.state error whose message names the file.
func failsNaming(t *testing.T, r Result, name string) {
	t.Helper()
	r.Fails(t, 1, "failed.state")
	assert.Contains(t, r.Stdout+r.Stderr, name, "the error names the file")
}

func TestSecurity_StateLockLinkRefused(t *testing.T) {
	env := NewEnv(t)
	target := outsideFile(t, env, "victim", "precious\n")
	lock := filepath.Join(stateDir(t, env), "lock")
	require.NoError(t, os.Symlink(target, lock))

	r := env.Venom("checkpoint", "--agent=a1", "--json")
	failsNaming(t, r, "venom/lock")
	assertContent(t, target, "precious\n")
	fi, err := os.Lstat(lock)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is left as it was found")
	assert.Empty(t, env.Git("for-each-ref", "refs/venom"), "nothing was captured")
}

func TestSecurity_StateLogLinkRefused(t *testing.T) {
	env := NewEnv(t)
	// One line without its newline: read through the link, it would be a
	// torn tail to cut, and the record would be appended after it.
	target := outsideFile(t, env, "victim.log", "one line of the user's, no newline")
	log := filepath.Join(stateDir(t, env), "log.jsonl")
	require.NoError(t, os.Symlink(target, log))

	failsNaming(t, env.Venom("checkpoint", "--agent=a1", "--json"), "venom/log.jsonl")
	assertContent(t, target, "one line of the user's, no newline")
	failsNaming(t, env.Venom("checkpoint", "list", "--json"), "venom/log.jsonl")
	assertContent(t, target, "one line of the user's, no newline")
}

func TestSecurity_StateFIFORefused(t *testing.T) {
	for _, name := range []string{"lock", "log.jsonl"} {
		t.Run(name, func(t *testing.T) {
			env := NewEnv(t)
			require.NoError(t, syscall.Mkfifo(filepath.Join(stateDir(t, env), name), 0o644))
			r := venomWithin(t, env, 20*time.Second, "checkpoint", "--agent=a1", "--json")
			failsNaming(t, r, "venom/"+name)
			assert.Contains(t, r.Stdout, "FIFO")
		})
	}
}

func TestSecurity_StateFolderLinkRefused(t *testing.T) {
	env := NewEnv(t)
	outside := filepath.Join(env.Root, "outside")
	// What a cleanup of venom/tmp would remove, were venom/ followed.
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "tmp"), 0o755))
	keep := outsideFile(t, env, "tmp/keep", "keep me\n")
	common := env.Git("rev-parse", "--path-format=absolute", "--git-common-dir")
	require.NoError(t, os.Symlink(outside, filepath.Join(common, "venom")))

	failsNaming(t, env.Venom("checkpoint", "--agent=a1", "--json"), "venom")
	assertContent(t, keep, "keep me\n")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"tmp"}, names, "nothing was made in the folder venom/ leads to")
}

// A link for one of venom/'s folders is never followed: the capture goes
// on without what that folder holds. In the folder pending/ leads to, a
// file named as an agent's dead mark (a1.1) would be removed by the
// pending check of list were the link followed. (A link for tmp/ is
// removed as a link, with or without statefile: no test can tell.)
func TestSecurity_StateSubfolderLinkNotFollowed(t *testing.T) {
	for _, name := range []string{"index", "pending"} {
		t.Run(name, func(t *testing.T) {
			env := NewEnv(t)
			outside := filepath.Join(env.Root, "outside")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			mark := outsideFile(t, env, "a1.1", "not a mark\n")
			require.NoError(t, os.Symlink(outside, filepath.Join(stateDir(t, env), name)))
			env.Write("a.txt", "a\n")
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			env.Write("a.txt", "b\n")
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			env.Venom("checkpoint", "list", "--json").OK(t)
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing was written in the folder venom/%s leads to", name)
			assertContent(t, mark, "not a mark\n")
			assert.Equal(t, "b", env.Git("show", "refs/venom/checkpoints/a1/2:a.txt"))
		})
	}
}

// Links at the names the private index's cache files were once written
// to before their rename (<key>.json.tmp, <key>.scan.tmp) receive nothing.
func TestSecurity_StateOldTempNamesNotWritten(t *testing.T) {
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	metas, err := filepath.Glob(filepath.Join(stateDir(t, env), "index", "*.json"))
	require.NoError(t, err)
	require.Len(t, metas, 1, "the private index's record")
	key := strings.TrimSuffix(metas[0], ".json")
	_, err = os.Stat(key + ".scan")
	require.NoError(t, err, "the quick scan's record")

	var targets []string
	for _, suffix := range []string{".json.tmp", ".scan.tmp"} {
		target := outsideFile(t, env, "victim"+suffix, "precious"+suffix+"\n")
		require.NoError(t, os.Symlink(target, key+suffix))
		targets = append(targets, target)
	}
	// A new untracked file in a new folder: both records are written again.
	env.Write("d/new.txt", "new\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	assert.Equal(t, "new", env.Git("show", "refs/venom/checkpoints/a1/2:d/new.txt"))
	for i, suffix := range []string{".json.tmp", ".scan.tmp"} {
		assertContent(t, targets[i], "precious"+suffix+"\n")
	}
}
