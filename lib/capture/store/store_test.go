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

	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/repo"
)

// testRepo is clitest's hermetic repository with files in folders at
// three depths and a link, opened as a capture opens it.
func testRepo(t *testing.T) (*repo.Repo, *clitest.World) {
	w := clitest.New(t)
	for _, p := range []string{"a", "d/b", "d/e/c", "z"} {
		w.Write(p, p+"\n")
	}
	require.NoError(t, os.Symlink("a", filepath.Join(w.Dir, "ln")))
	w.Git("add", "-A")
	w.Git("commit", "-qm", "init")
	r, err := repo.Open(context.Background(), w.Dir, w.Environ)
	require.NoError(t, err)
	return r, w
}

// requireBlobs checks that git reads each of objs back as its data.
func requireBlobs(t *testing.T, w *clitest.World, objs []Object) {
	t.Helper()
	var ids []string
	for _, o := range objs {
		ids = append(ids, o.ID.String())
	}
	for i, data := range gittest.Blobs(t, w.Dir, w.Environ, ids...) {
		require.Equal(t, string(objs[i].Data), string(data), "git reads %s back", ids[i])
	}
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
	r, w := testRepo(t)
	var objs []Object
	for i := 0; i < 50; i++ {
		objs = append(objs, blob(fmt.Sprintf("content %d\n", i)))
	}
	stored := blob("never written\n")
	stored.Stored = true
	objs = append(objs, stored)
	require.NoError(t, WritePack(r, objs))
	requireBlobs(t, w, objs[:50])
	c := exec.Command("git", "cat-file", "-e", stored.ID.String())
	c.Dir, c.Env = r.Top, w.Environ
	require.Error(t, c.Run(), "a Stored object is not written again")
	packs, err := filepath.Glob(filepath.Join(r.CommonDir, "objects", "pack", "*.idx"))
	require.NoError(t, err)
	require.Len(t, packs, 1)
	out := w.Git("verify-pack", "-v", packs[0])
	require.Contains(t, out, "non delta: 50 objects")
	require.NoError(t, WritePack(r, []Object{stored}[:0]), "nothing to write is no pack")
}

// EntryAt finds every path of a tree as git rev-parse tree:path does,
// reading held trees before the repository's, and reports a path under a
// file or missing as not found.
func TestTrees_EntryAtAgreesWithGit(t *testing.T) {
	r, w := testRepo(t)
	tree := w.Git("rev-parse", "HEAD^{tree}")
	odb, err := r.Odb()
	require.NoError(t, err)
	root, err := git.NewOid(tree)
	require.NoError(t, err)
	trees := NewTrees(odb, nil)
	for _, line := range strings.Split(w.Git("ls-tree", "-r", "-t", tree), "\n") {
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

// WritePack's pack is written again, and every object is in the
// repository, when a person's git gc --prune=now (git prune deletes each
// objects/pack/tmp_* file) took the temporary files before the install;
// it also never takes the name of the pack of the same objects already
// there (salted), which a running repack may delete.
func TestWritePack_AgainAfterGitPruneTookItsFiles(t *testing.T) {
	r, w := testRepo(t)
	objs := []Object{blob("one\n"), blob("two\n")}
	packDir := filepath.Join(r.CommonDir, "objects", "pack")
	pruned := 0
	testSealed = func() {
		if pruned > 0 {
			return
		}
		tmps, _ := filepath.Glob(filepath.Join(packDir, "tmp_*"))
		for _, p := range tmps {
			require.NoError(t, os.Remove(p))
		}
		pruned = len(tmps)
	}
	defer func() { testSealed = nil }()
	require.NoError(t, WritePack(r, objs))
	require.Equal(t, 2, pruned, "the pack and its index, taken before the install")
	requireBlobs(t, w, objs)
	first, _ := filepath.Glob(filepath.Join(packDir, "*.idx"))
	require.Len(t, first, 1)
	require.NoError(t, WritePack(r, objs))
	both, _ := filepath.Glob(filepath.Join(packDir, "*.idx"))
	require.Len(t, both, 2, "the same objects again: a pack of another name")
	w.Git("fsck", "--no-dangling")
}
