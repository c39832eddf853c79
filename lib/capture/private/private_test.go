package private

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/repo"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

func TestPrivateIndex_KeptAcrossARefresh(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	gitIn(t, dir, "add", "a.txt")
	gitIn(t, dir, "commit", "-qm", "a")
	ctx := context.Background()
	r, err := repo.Open(ctx, dir, os.Environ())
	require.NoError(t, err)
	tmp := filepath.Join(r.StateDir, "tmp")
	require.NoError(t, os.MkdirAll(tmp, 0o777))
	ready := func() *Ready {
		t.Helper()
		p := Open(r)
		require.NotNil(t, p)
		defer p.Close()
		rd, err := p.Ready(ctx, r, tmp)
		require.NoError(t, err)
		return rd
	}

	first := ready()
	made := seeds

	// A refresh: the file's times move, its content does not; git status
	// rewrites the user's index.
	later := time.Now().Add(3 * time.Second)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "a.txt"), later, later))
	before, _ := userIndexSig(r.Index)
	gitIn(t, dir, "status", "--porcelain")
	after, _ := userIndexSig(r.Index)
	require.NotEqual(t, before, after, "git status did not rewrite the index")

	second := ready()
	require.Equal(t, made, seeds, "a refresh made the private index again")
	require.Equal(t, first.Tree.String(), second.Tree.String())

	// A real change to the user's index does make it again.
	gitIn(t, dir, "rm", "-q", "--cached", "a.txt")
	ready()
	require.Equal(t, made+1, seeds)
}

// A program started while the index is open shares its lock's open file
// until it execs (until it ends, here): Close still lets the next capture
// have the index, instead of sending it to a copy.
func TestPrivateIndex_CloseLetsGoWhileAChildHoldsTheFile(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	r, err := repo.Open(context.Background(), dir, os.Environ())
	require.NoError(t, err)
	p := Open(r)
	require.NotNil(t, p)
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{p.lockf}
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	p.Close()
	again := Open(r)
	require.NotNil(t, again, "the private index is still locked after Close")
	again.Close()
}
