package checkpoints

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/repo"
)

// List frees every libgit2 handle it opens: after many listings, each
// with its repository freed, no file of the repository's pack is open or
// mapped, and the process holds no more open files than before. A leaked
// object database kept the pack open (libgit2 shares one open pack between
// the handles that read it, for as long as any of them lives). The
// collector is off, so that no finalizer frees a leaked handle behind the
// test's back.
func TestList_FreesItsHandles(t *testing.T) {
	dir := t.TempDir()
	gitEnv := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + dir}
	gittest.Run(t, dir, "", gitEnv, "init", "-q", ".")
	// fast-import writes the two checkpoint commits and their refs as one
	// pack (unpackLimit=0: even so few objects are not left loose).
	gittest.Run(t, dir, `blob
mark :1
data 2
a

blob
mark :2
data 2
b

commit refs/venom/checkpoints/a1/1
mark :3
committer T <t@example.com> 1112911993 -0700
data 3
k1

M 100644 :1 a.txt

commit refs/venom/checkpoints/a1/2
mark :4
committer T <t@example.com> 1112911993 -0700
data 3
k2
from :3
M 100644 :2 a.txt
M 100644 :2 b.txt

`, gitEnv, "-c", "fastimport.unpackLimit=0", "fast-import", "--quiet")
	a := &agents.Agent{ID: "a1"}
	for n := 1; n <= 2; n++ {
		c := &agents.Checkpoint{N: n}
		c.Checkpoint = fmt.Sprintf("k%d", n)
		commit := gittest.Run(t, dir, "", gitEnv, "rev-parse", fmt.Sprintf("refs/venom/checkpoints/a1/%d", n))
		c.Repos = []journal.RepoState{{Repo: ".", Commit: commit}}
		a.Checkpoints = append(a.Checkpoints, c)
	}

	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	list := func() {
		r, err := repo.Open(context.Background(), dir, gitEnv)
		require.NoError(t, err)
		defer r.Free()
		l, err := List(r, a, Filter{})
		require.NoError(t, err)
		require.Len(t, l.Checkpoints, 2, "unusable: %v", l.Unusable)
		require.NotNil(t, l.Checkpoints[0].FilesChanged)
		assert.Equal(t, 2, *l.Checkpoints[0].FilesChanged)
	}
	before := len(openFiles(t))
	for range 50 {
		list()
	}
	pack := filepath.Join(dir, ".git", "objects", "pack")
	for _, f := range openFiles(t) {
		assert.NotContains(t, f, pack, "a file of the pack is still open")
	}
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	for _, m := range strings.Split(string(maps), "\n") {
		assert.NotContains(t, m, pack, "a file of the pack is still mapped")
	}
	assert.Equal(t, before, len(openFiles(t)), "open files after 50 listings")
}

// openFiles names the process's open files.
func openFiles(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []string
	for _, f := range fds {
		l, _ := os.Readlink(filepath.Join("/proc/self/fd", f.Name()))
		out = append(out, l)
	}
	return out
}
