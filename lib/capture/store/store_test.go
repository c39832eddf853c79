package store

import (
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/repo"
)

func testRepo(t *testing.T) (*repo.Repo, []string) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@a", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@a")
	gittest.Run(t, dir, "", env, "init", "-q")
	for _, p := range []string{"a", "d/b", "d/e/c", "z"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(p+"\n"), 0o644))
	}
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "ln")))
	gittest.Run(t, dir, "", env, "add", "-A")
	gittest.Run(t, dir, "", env, "commit", "-qm", "init")
	r, err := repo.Open(context.Background(), dir, env)
	require.NoError(t, err)
	return r, env
}

func blob(data string) Object {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00%s", len(data), data)
	var id git.Oid
	copy(id[:], h.Sum(nil))
	return Object{ID: id, Type: packfile.Blob, Data: []byte(data)}
}

// WritePack stores the objects not marked Stored as one pack git reads
// and verifies, and leaves the Stored ones out.
func TestWritePack_GitReadsWhatIsWritten(t *testing.T) {
	r, env := testRepo(t)
	var objs []Object
	for i := 0; i < 50; i++ {
		objs = append(objs, blob(fmt.Sprintf("content %d\n", i)))
	}
	stored := blob("never written\n")
	stored.Stored = true
	objs = append(objs, stored)
	require.NoError(t, WritePack(r, objs))
	for _, o := range objs[:50] {
		require.Equal(t, string(o.Data), gittest.Run(t, r.Top, "", env, "cat-file", "blob", o.ID.String())+"\n")
	}
	c := exec.Command("git", "cat-file", "-e", stored.ID.String())
	c.Dir, c.Env = r.Top, env
	require.Error(t, c.Run(), "a Stored object is not written again")
	packs, err := filepath.Glob(filepath.Join(r.CommonDir, "objects", "pack", "*.idx"))
	require.NoError(t, err)
	require.Len(t, packs, 1)
	out := gittest.Run(t, r.Top, "", env, "verify-pack", "-v", packs[0])
	require.Contains(t, out, "non delta: 50 objects")
	require.NoError(t, WritePack(r, []Object{stored}[:0]), "nothing to write is no pack")
}

// EntryAt finds every path of a tree as git rev-parse tree:path does,
// reading held trees before the repository's, and reports a path under a
// file or missing as not found.
func TestTrees_EntryAtAgreesWithGit(t *testing.T) {
	r, env := testRepo(t)
	tree := gittest.Run(t, r.Top, "", env, "rev-parse", "HEAD^{tree}")
	odb, err := r.Odb()
	require.NoError(t, err)
	root, err := git.NewOid(tree)
	require.NoError(t, err)
	trees := NewTrees(odb, nil)
	for _, line := range strings.Split(gittest.Run(t, r.Top, "", env, "ls-tree", "-r", "-t", tree), "\n") {
		meta, p, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		mode, id, found, err := trees.EntryAt(*root, p)
		require.NoError(t, err)
		require.True(t, found, p)
		require.Equal(t, f[2], id.String(), p)
		require.Equal(t, f[0], fmt.Sprintf("%06o", mode), p)
	}
	for _, p := range []string{"missing", "a/under-a-file", "d/e/none", "d/e/c/x"} {
		_, _, found, err := trees.EntryAt(*root, p)
		require.NoError(t, err)
		require.False(t, found, p)
	}
	// A held tree is read from memory: one that is nowhere on disk.
	b := blob("held\n")
	raw := append([]byte("100644 only\x00"), b.ID[:]...)
	h := sha1.New()
	fmt.Fprintf(h, "tree %d\x00%s", len(raw), raw)
	var held git.Oid
	copy(held[:], h.Sum(nil))
	mode, id, found, err := NewTrees(odb, map[git.Oid][]byte{held: raw}).EntryAt(held, "only")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, uint32(0o100644), mode)
	require.Equal(t, b.ID, id)
}
