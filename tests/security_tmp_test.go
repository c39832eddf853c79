package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSecurity_CheckoutIndexOutOfReach: under core.sharedRepository=group
// the state folder's tmp/ is group-writable. The real call pauses once
// git checkout-index's temporary index is written; a group member then
// replaces every file it can reach in tmp/ with an index naming its own
// blob. The rollback still writes the checkpoint's file (git's CRLF
// conversion of it), exact: the index lives in its private stage (0700).
func TestSecurity_CheckoutIndexOutOfReach(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "core.sharedRepository", "group")
	// eol=crlf: git checkout-index writes these, not the rollback itself.
	env.Write(".gitattributes", "*.crlf text eol=crlf\n")
	env.Commit("attributes")
	env.Turn("a1", func() { env.Write("a.crlf", "checkpoint a\n") }) // k1, k2
	env.Turn("a1", func() { env.Write("a.crlf", "agent a\n") })
	args := []string{"--agent=a1", "--checkpoint=k2", "--restore=files", "--json"}
	plan := env.DryRun(args[:3]...).Plan
	resume := env.startResumable("rollback-apply-index", "rollback", append(args, "--plan="+plan)...)

	attacker := env.GitInput("attacker\n", "hash-object", "-w", "--stdin")
	forged := filepath.Join(env.Root, "forged.index")
	tmp := filepath.Join(env.StateDir(), "tmp")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	var swapped []string
	for _, de := range entries {
		fi, err := de.Info()
		require.NoError(t, err)
		if fi.IsDir() {
			require.Zero(t, fi.Mode().Perm()&0o077, "%s in tmp/ is %v: a group member can reach into it", de.Name(), fi.Mode())
			continue
		}
		// What a group member can replace: a name in tmp/ itself.
		env.run(env.Dir, []string{"GIT_INDEX_FILE=" + forged}, "git", "update-index", "--add", "--cacheinfo", "100644,"+attacker+",a.crlf")
		require.NoError(t, os.Rename(forged, filepath.Join(tmp, de.Name())))
		swapped = append(swapped, de.Name())
	}
	r := resume()
	require.Equal(t, 0, r.Code, "%s%s", r.Stdout, r.Stderr)
	var res RollbackResult
	r.JSON(t, &res)
	b, err := os.ReadFile(env.Path("a.crlf"))
	require.NoError(t, err)
	require.Equal(t, "checkpoint a\r\n", string(b), "swapped in tmp/: %v", swapped)
	require.True(t, *res.Exact)
	require.Empty(t, swapped, "the index for checkout-index was reachable by name in tmp/")
	// git reads the file back as the checkpoint's blob.
	require.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a1/2:a.crlf"), env.Git("hash-object", "a.crlf"))
}

// TestSecurity_IndexRestoredWithItsMode: a rollback's undo puts the
// user's index back with git's mode (0660 under sharedRepository=group,
// umask 077) set on the descriptor, so a group member who swaps the name
// for a link to a private file meanwhile does not open that file to the
// group. Not parallel: it sets the process's umask.
func TestSecurity_IndexRestoredWithItsMode(t *testing.T) {
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	setup := func(t *testing.T) *Env {
		env := NewEnv(t)
		env.Git("config", "core.sharedRepository", "group")
		env.Write("keep/a.txt", "a\n")
		env.Commit("base")
		env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
		env.Write("keep/a.txt", "changed\n")
		env.Commit("the agent's commit")
		env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
		return env
	}
	mode := func(t *testing.T, p string) os.FileMode {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return fi.Mode()
	}
	args := []string{"--checkpoint=k1", "--restore=files"}
	failHead := "VENOM_TEST_FAIL_AT=rollback-head"

	t.Run("git's mode", func(t *testing.T) {
		env := setup(t)
		index := env.Path(".git/index")
		gits := mode(t, index)
		require.Equal(t, os.FileMode(0o660), gits, "git's own index under umask 077, core.sharedRepository=group")
		before := env.Snapshot()
		env.RollbackFails([]string{failHead}, 1, "failed.rollback_undone", args...)
		require.Equal(t, gits, mode(t, index), "the index put back")
		require.Equal(t, before.Index, env.Snapshot().Index)
	})

	t.Run("name swapped for a link", func(t *testing.T) {
		env := setup(t)
		secret := filepath.Join(env.Root, "private-key")
		require.NoError(t, os.WriteFile(secret, []byte("private\n"), 0o600))
		plan := env.DryRun(args...).Plan
		p := env.pause("rollback-index-restore", []string{failHead, "VENOM_TEST_PAUSE_RESUME=1"},
			"rollback", append(args, "--plan="+plan, "--json")...)
		restoring, err := filepath.Glob(env.Path(".git/index.venom-restore-*"))
		require.NoError(t, err)
		require.Len(t, restoring, 1)
		require.NoError(t, os.Remove(restoring[0]))
		require.NoError(t, os.Symlink(secret, restoring[0]))
		require.NoError(t, os.Remove(p.file))
		<-p.done
		require.NotContains(t, p.errb.String(), "panic:")
		require.Equal(t, os.FileMode(0o600), mode(t, secret), "the private file's mode was opened to the group")
		b, err := os.ReadFile(secret)
		require.NoError(t, err)
		require.Equal(t, "private\n", string(b))
	})
}
