package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecurity_CaptureFolderSwappedForALinkBeforeTheRead: a capture reads
// the files the scan found changed by their path in the tree. A folder of
// the tree swapped for a link to a folder outside it between the scan and
// the read (a local process racing the capture) must not have a file
// outside the tree read into the checkpoint.
func TestSecurity_CaptureFolderSwappedForALinkBeforeTheRead(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("sub/f", "tracked\n")
	env.Write("sub/g", "tracked too\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Tick()
	env.Write("sub/f", "the agent's edit\n")
	env.Write("sub/g", "another edit\n")

	outside := filepath.Join(env.Root, "outside")
	require.NoError(t, os.MkdirAll(outside, 0o700))
	secret := "a private file outside the tree\n"
	require.NoError(t, os.WriteFile(filepath.Join(outside, "f"), []byte(secret), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "g"), []byte(secret+"g\n"), 0o600))
	secretID := env.GitInput(secret, "hash-object", "--stdin")

	p := env.pause("capture-object-write", []string{"VENOM_TEST_PAUSE_RESUME=1"},
		"checkpoint", "--agent=a1", "--reason=turn_end", "--json")
	require.NoError(t, os.Rename(env.Path("sub"), env.Path("sub.moved")))
	require.NoError(t, os.Symlink(outside, env.Path("sub")))
	require.NoError(t, os.Remove(p.file))
	<-p.done
	require.NotContains(t, p.errb.String(), "panic:")

	// Whatever the checkpoint holds, the outside file is nowhere in it.
	all := env.Git("for-each-ref", "--format=%(refname)")
	for _, ref := range strings.Fields(all) {
		ls := env.Git("ls-tree", "-r", ref)
		require.NotContains(t, ls, secretID, "%s holds the file outside the tree: %s", ref, ls)
	}
	out := env.GitRaw("cat-file", "-e", secretID)
	require.NotEqual(t, 0, out.Code, "the outside file's bytes were stored in the repository")
}
