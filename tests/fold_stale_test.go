package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fold.json checks only the log's first and last 4 KiB before its mark,
// so a log rewritten in its middle to the same length keeps a stale fold.
// A rollback still targets only what the checkpoint's ref holds: k1's
// record is rewritten to name k2's commit; while the ref holds k1's commit
// that tree is restored, and once the ref matches the rewrite the
// rollback is refused (not_found.checkpoint).
func TestFold_StaleAfterAMiddleRewriteTargetsOnlyTheRef(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Extra = append(env.Extra, "VENOM_TEST_FOLD_EVERY=1")
	pad := func(from int) {
		for i := from; i < from+12; i++ {
			env.Write("pad.txt", fmt.Sprintf("pad %d\n", i))
			env.Take(t, "--agent=a0")
		}
	}
	pad(0)
	env.Write("a.txt", "one\n")
	env.Take(t, "--agent=a1")
	env.Write("a.txt", "two\n")
	env.Take(t, "--agent=a1")
	pad(100)
	// A lock holder of every agent writes a1's own file of the snapshot
	// (fold.d/a1.json) at the end of the log, far from k1's record: the
	// captures of a0 wrote only a0's.
	env.Venom("checkpoint", "prune").OK(t)
	k1 := env.Git("rev-parse", "refs/venom/checkpoints/a1/1")
	k2 := env.Git("rev-parse", "refs/venom/checkpoints/a1/2")
	require.FileExists(t, filepath.Join(env.StateDir(), "fold.json"), "a writer left a fold snapshot")

	// The rewrite: k1's record names k2's commit; same length, far from
	// both ends of the log.
	log := env.LogPath()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	at := bytes.Index(b, []byte(`"commit":"`+k1+`"`))
	require.Positive(t, at)
	require.Greater(t, at, 4096)
	require.Less(t, at, len(b)-4096-100)
	rewritten := bytes.Replace(b, []byte(`"commit":"`+k1+`"`), []byte(`"commit":"`+k2+`"`), 1)
	require.Len(t, rewritten, len(b))
	require.NoError(t, os.WriteFile(log, rewritten, 0o644))

	// Read whole, the log now says k1 is k2's commit, which its ref does
	// not hold: refused. The fold read from the snapshot is stale.
	fold := filepath.Join(env.StateDir(), "fold.json")
	require.NoError(t, os.Rename(fold, fold+".aside"))
	env.Venom("rollback", "--agent=a1", "k1", "--restore=files", "--outside=overwrite", "--dry-run", "--json").
		Fails(t, 3, "not_found.checkpoint")
	require.NoFileExists(t, fold, "a dry run writes no snapshot")
	require.NoError(t, os.Rename(fold+".aside", fold))

	// The stale fold still says k1 is its own commit, as its ref does: the
	// rollback restores the ref's tree, never k2's.
	env.Write("a.txt", "three\n")
	env.Rollback("--agent=a1", "k1", "--restore=files", "--outside=overwrite")
	assert.Equal(t, env.Git("show", k1+":a.txt")+"\n", env.Read("a.txt"))
	assert.Equal(t, "one\n", env.Read("a.txt"))

	// Ref moved to match the rewritten record: the fold and the ref
	// disagree, and the checkpoint is not used.
	env.Git("update-ref", "refs/venom/checkpoints/a1/1", k2, k1)
	env.Write("a.txt", "four\n")
	r := env.Venom("rollback", "--agent=a1", "k1", "--restore=files", "--outside=overwrite", "--dry-run", "--json")
	r.Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stdout, "no longer holds the logged commit")
	assert.Equal(t, "four\n", env.Read("a.txt"))
	assert.False(t, strings.Contains(env.Read("a.txt"), "two"))
}
