package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecurity_CheckoutIndexOutOfReach: under core.sharedRepository=group
// the state folder's tmp/ is group-writable. The real call pauses once the
// temporary index for git checkout-index is written and before git reads
// it; a group member then replaces every file it can reach in tmp/ with an
// index naming its own blob for the file. What the rollback writes is
// still the checkpoint's file (git's own CRLF conversion of it), exact,
// because the index lives in the rollback's private stage (0700), never
// by name in tmp/.
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
