package share

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// migrate moves a quarantine's loose objects and pack into the store,
// where git reads them, and leaves out the unfinished files and the
// pack's .keep; the quarantine is empty after, and one a killed fetch
// left is removed by the next newQuarantine.
func TestQuarantine_MigrateAsGitReadsIt(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	gittest.Run(t, dir, "", env, "init", "-q")
	objects := filepath.Join(dir, ".git", "objects")
	stale := filepath.Join(objects, quarantinePrefix+"killed")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "pack"), 0o755))
	q, err := newQuarantine(objects)
	require.NoError(t, err)
	assert.NoDirExists(t, stale)

	in := append(env[:len(env):len(env)], q.env()...)
	loose := gittest.Run(t, dir, "loose\n", in, "hash-object", "-w", "--stdin")
	packed := gittest.Run(t, dir, "packed\n", in, "hash-object", "-w", "--stdin")
	gittest.Run(t, dir, packed+"\n", in, "pack-objects", "-q", filepath.Join(q.dir, "pack", "pack"))
	require.NoError(t, os.Remove(filepath.Join(q.dir, packed[:2], packed[2:])))
	packs, err := filepath.Glob(filepath.Join(q.dir, "pack", "pack-*.pack"))
	require.NoError(t, err)
	require.Len(t, packs, 1)
	keep := packs[0][:len(packs[0])-len(".pack")] + ".keep"
	require.NoError(t, os.WriteFile(keep, []byte("fetch-pack lock\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(q.dir, "pack", "tmp_pack_x"), []byte("PACK"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(q.dir, loose[:2], "tmp_obj_x"), nil, 0o644))

	for _, id := range []string{loose, packed} {
		c := gittest.Run(t, dir, "", in, "cat-file", "-t", id)
		require.Equal(t, "blob", c, "git reads %s in the quarantine", id)
	}
	require.NoError(t, q.migrate())
	for _, id := range []string{loose, packed} {
		assert.Equal(t, "blob", gittest.Run(t, dir, "", env, "cat-file", "-t", id), "%s moved into the store", id)
	}
	left, err := os.ReadDir(q.dir)
	require.NoError(t, err)
	assert.Empty(t, left)
	stored, err := filepath.Glob(filepath.Join(objects, "pack", "*"))
	require.NoError(t, err)
	base := filepath.Base(keep[:len(keep)-len(".keep")])
	assert.ElementsMatch(t, []string{base + ".idx", base + ".pack"}, names(stored), "no .keep, no tmp_pack")
	fanout, err := os.ReadDir(filepath.Join(objects, loose[:2]))
	require.NoError(t, err)
	assert.Equal(t, []string{loose[2:]}, names(entries(fanout)))
	require.NoError(t, q.remove())
	assert.NoDirExists(t, q.dir)
}

func entries(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func names(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}
