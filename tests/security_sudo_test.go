package tests

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecurity_RootInAnotherUsersRepository: `sudo git venom-checkpoint`
// in a person's repository is accepted by git (SUDO_UID names the owner),
// and made the state root's (root:root, 0644): the owner's own commands
// then failed to take the lock. Root is
// refused there under sudo before anything is written, and the owner's
// commands work. Root let in by safe.directory (no sudo) is warned.
func TestSecurity_RootInAnotherUsersRepository(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, as CI runs")
	}
	t.Parallel()
	const owner = 1001
	env := NewEnv(t)
	env.Write("a.txt", "the owner's work\n")
	for _, dir := range []string{filepath.Dir(env.Root), env.Root, env.Home, binDir} {
		require.NoError(t, os.Chmod(dir, 0o755))
	}
	require.NoError(t, filepath.WalkDir(env.Dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, owner, owner)
	}))

	r := env.VenomIn(env.Dir, []string{"SUDO_UID=1001"}, "checkpoint", "--agent=a1", "--json")
	r.Fails(t, 10, "unsupported.root_in_others")
	assert.Contains(t, r.Stdout, `"owner":1001`)
	require.NoError(t, filepath.WalkDir(env.Dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		assert.EqualValues(t, owner, fi.Sys().(*syscall.Stat_t).Uid, "root made %s", p)
		return nil
	}))
	_, err := os.Stat(env.Path(".git/venom"))
	assert.True(t, os.IsNotExist(err), "root made git-venom's state")

	// The owner's own command works.
	tmp := filepath.Join(env.Root, "owner-tmp")
	require.NoError(t, os.Mkdir(tmp, 0o700))
	require.NoError(t, os.Chown(tmp, owner, owner))
	c := env.Command([]string{"TMPDIR=" + tmp}, "checkpoint", "--agent=a1", "--json")
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: owner, Gid: owner}}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	require.NoError(t, c.Run(), "%s%s", out.String(), errb.String())
	assert.Contains(t, out.String(), `"checkpoint":"k1"`)
}

// TestSecurity_RootThroughSafeDirectoryIsWarned: root without sudo in a
// repository another user owns came in through safe.directory, an
// administrator's choice (TestSecurity_StateSafeDirectory): it works, and
// says that the state is root's now and how to give it back.
func TestSecurity_RootThroughSafeDirectoryIsWarned(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, as CI runs")
	}
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	require.NoError(t, filepath.WalkDir(env.Dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 1001, 1001)
	}))
	r := env.run(env.Dir, nil, "git", "-c", "safe.directory=*", "venom-checkpoint", "--agent=a1", "--json").OK(t)
	assert.Contains(t, r.Stderr, "warning: running as root in a repository user 1001 owns")
	assert.Contains(t, r.Stderr, "chown -R 1001 "+filepath.Join(env.Dir, ".git"))
}
