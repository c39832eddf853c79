package tests

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapture_BulkNewFilesStreamIntoOnePack: past the blobs a capture
// holds in memory (VENOM_TEST_MEMORY_BUDGET shrinks it), new files stream
// into a held pack of their own, never one git hash-object each (armed,
// capture-hash-object fails a capture that asks git). The checkpoint holds
// git add -A's tree, fsck is clean, each object in one pack, and a
// rollback to it brings the files back.
func TestCapture_BulkNewFilesStreamIntoOnePack(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	env.Commit("base")
	k1 := env.Checkpoint("--agent=a1")
	noise := make([]byte, 6000)
	contents := map[string]string{}
	for i := 0; i < 30; i++ {
		rand.Read(noise)
		p := fmt.Sprintf("data/d%d/f%02d.bin", i%3, i)
		contents[p] = string(noise)
		if i%5 == 0 {
			// Text deflates; the same content twice is one object.
			contents[p] = strings.Repeat(fmt.Sprintf("line %d\n", i%10), 500)
		}
		env.Write(p, contents[p])
	}
	env.Write("a.txt", "edited\n")
	fault := []string{"VENOM_TEST_MEMORY_BUDGET=20000", "VENOM_TEST_FAIL_AT=capture-hash-object"}
	env.VenomIn(env.Dir, fault, "checkpoint", "--agent=a1", "--json").OK(t)
	k2 := "refs/venom/checkpoints/a1/2"
	require.Equal(t, env.RecipeTree(), env.Git("rev-parse", k2+"^{tree}"))
	env.Git("fsck", "--strict", "--no-dangling")

	// Every object in one pack only: the spill and the commit's pack.
	seen := map[string]string{}
	packs, err := filepath.Glob(filepath.Join(env.Dir, ".git", "objects", "pack", "*.idx"))
	require.NoError(t, err)
	for _, idx := range packs {
		for _, line := range strings.Split(env.Git("verify-pack", "-v", idx), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || len(f[0]) != 40 {
				continue
			}
			assert.Empty(t, seen[f[0]], "%s %s is in two packs", f[1], f[0])
			seen[f[0]] = idx
		}
	}
	require.GreaterOrEqual(t, len(packs), 3, "k1's pack, the spill, and k2's commit pack")
	// One git hash-object and one git rev-parse for every file.
	paths, blobs := []string{"hash-object", "--"}, []string{"rev-parse"}
	for p := range contents {
		paths, blobs = append(paths, p), append(blobs, k2+":"+p)
	}
	want, got := strings.Split(env.Git(paths...), "\n"), strings.Split(env.Git(blobs...), "\n")
	require.Len(t, want, len(contents))
	require.Len(t, got, len(contents))
	for i, p := range paths[2:] {
		require.Equal(t, want[i], got[i], p)
	}

	// Back to k1 and forward again: the files come back from the spill.
	env.Rollback("--agent=a1", "--checkpoint="+k1, "--outside=overwrite")
	require.NoFileExists(t, env.Path("data/d0/f00.bin"))
	env.Rollback("--agent=a1", "--checkpoint=k2", "--outside=overwrite")
	for p, want := range contents {
		require.True(t, want == env.Read(p), "%s came back whole", p)
	}
}
