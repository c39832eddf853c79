package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A capture's objects must pass git's own checks. Two files of one content
// are one blob, and two folders of the same files are one tree: each must be
// written once, or git refuses the pack ("appears twice in the pack").
func TestCheckpoint_ObjectsPassGitsChecks(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Write("b.txt", "b\n")
	env.Commit("base")
	env.Take(t, "--agent=a1")
	for _, p := range []string{"a.txt", "b.txt", "new1.txt", "new2.txt"} {
		env.Write(p, "the same content\n")
	}
	for _, d := range []string{"one", "two", "three/deeper"} {
		env.Write(d+"/x.txt", "x\n")
		env.Write(d+"/y.txt", "y\n")
	}
	env.Take(t, "--agent=a1")
	// The recipe after the capture: it writes its objects loose, and a
	// capture writes none that are there already.
	require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/a1/2"))

	require.NotEmpty(t, env.CheckObjects(t), "the capture wrote no pack")
	// One blob for the four files, one tree for one/ and two/.
	blobs := env.Git("ls-tree", "-r", "refs/venom/checkpoints/a1/2")
	require.Equal(t, 4, strings.Count(blobs, fmt.Sprintf("blob %s\t", env.Git("hash-object", "a.txt"))))
}

// CheckObjects runs git's checks on every pack and object of the repository:
// index-pack --strict refuses what fsck lets pass, such as an object twice
// in one pack. It returns the packs it checked.
func (e *Env) CheckObjects(t *testing.T) []string {
	t.Helper()
	packs, err := filepath.Glob(e.Path(".git/objects/pack/*.pack"))
	require.NoError(t, err)
	for _, p := range packs {
		e.Git("verify-pack", strings.TrimSuffix(p, ".pack")+".idx")
		e.Git("index-pack", "--strict", "-o", filepath.Join(t.TempDir(), "check.idx"), p)
	}
	e.Git("fsck", "--no-dangling")
	return packs
}
