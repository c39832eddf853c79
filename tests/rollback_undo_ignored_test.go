package tests

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A rollback that brings in a .gitignore covering the files it writes (and
// itself): its undo's capture sees neither, so the rollback names what it
// wrote and no capture saw (unseen), and the undo puts back exactly the
// safety checkpoint's tree, not the copy's notes.txt nor the .gitignore.
func TestRollback_UndoPutsBackFilesAGitignoreHid(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	star := c.a.GitInput("*\n", "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	text := c.a.GitInput("the copy's text\n", "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	c.forgeCheckpoint(t, 2, "100644 blob "+star+"\t.gitignore", "100644 blob "+text+"\tnotes.txt")

	b := NewEnv(t)
	b.Git("remote", "add", "origin", c.remote)
	b.Write("notes.txt", "my untracked notes: PRECIOUS\n")
	b.Venom("checkpoint", "--agent=me", "--isolation=worktree", "--json").OK(t)
	b.Venom("checkpoint", "fetch", "--json").OK(t)
	cp := "origin/" + c.machine + "/a1"
	before := b.Git("status", "--porcelain", "--ignored", "--untracked-files=all")
	require.Equal(t, "?? notes.txt", before)
	names := func() []string {
		ents, err := os.ReadDir(b.Dir)
		require.NoError(t, err)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	files := names()

	b.Rollback("--agent="+cp, "k2", "--into=me", "--restore=files", "--outside=overwrite")
	require.Equal(t, "the copy's text\n", b.Read("notes.txt"))
	require.Equal(t, "*\n", b.Read(".gitignore"))

	dry := b.DryRun("--agent=me", "--undo")
	require.Empty(t, dry.LeftReasons(), "the undo leaves nothing behind")
	// Every file the copy wrote, hidden by its .gitignore, goes back.
	require.Equal(t, map[string]string{".gitignore": "turn", "notes.txt": "turn", "turn-a1.txt": "turn"}, dry.Classes())
	undo := b.Rollback("--agent=me", "--undo")
	require.True(t, *undo.Exact)
	require.Equal(t, "my untracked notes: PRECIOUS\n", b.Read("notes.txt"))
	require.NoFileExists(t, b.Path(".gitignore"))
	require.Equal(t, before, b.Git("status", "--porcelain", "--ignored", "--untracked-files=all"))
	require.Equal(t, files, names(), "the tree is not the one before the rollback")
	// The undo's safety checkpoint holds what it replaced and deleted: the
	// copy's files, so that undoing the undo brings them back.
	safety := "refs/venom/checkpoints/me/" + undo.Safety[1:]
	require.Equal(t, "the copy's text", b.Git("show", safety+":notes.txt"))
	require.Equal(t, "*", b.Git("show", safety+":.gitignore"))
	b.Rollback("--agent=me", "--undo")
	require.Equal(t, "the copy's text\n", b.Read("notes.txt"))
	require.Equal(t, "*\n", b.Read(".gitignore"))
}
