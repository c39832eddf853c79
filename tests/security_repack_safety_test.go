package tests

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecurity_RepackBeforeTheSafetyRef: the real call's capture of S
// finds a blob only the dry run stored (in a pack no ref reaches yet), and
// a person's `git repack -a -d` drops that pack before the safety ref.
// Once the safety ref is made, every blob of S the rollback replaces or
// deletes is looked up in a fresh view of the object store; one missing is
// failed.checkpoint_git before anything is written, so no file whose only
// copy is gone is deleted.
func TestSecurity_RepackBeforeTheSafetyRef(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Turn("a1", func() { env.Write("agent.txt", "the agent's\n") })
	// A person's file, outside any turn: in no checkpoint yet.
	env.Write("notes.txt", "a person's only copy\n")
	plan := env.DryRun("k1", "--outside=overwrite").Plan
	finish := env.startResumable("rollback-before-safety", "rollback", "k1", "--outside=overwrite", "--plan="+plan, "--json")
	env.Git("repack", "-a", "-d", "-q")
	r := finish()
	if _, err := os.Stat(env.Path("notes.txt")); err != nil {
		// The file is gone: its content must be in the safety checkpoint.
		out := env.GitRaw("cat-file", "-p", "refs/venom/checkpoints/a1/3:notes.txt")
		require.Equal(t, 0, out.Code, "notes.txt deleted and its content is in no object: %s\n%s", r.Stdout, r.Stderr)
		assert.Equal(t, "a person's only copy\n", out.Stdout)
		return
	}
	assert.Equal(t, "a person's only copy\n", env.Read("notes.txt"))
	r.Fails(t, 1, "failed.checkpoint_git")
	assert.Equal(t, "the agent's\n", env.Read("agent.txt"), "nothing written")
}
