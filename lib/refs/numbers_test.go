package refs

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNumbers_AsGitListsThem: the checkpoint refs read as files, packed,
// loose, and both, are the ones git for-each-ref lists; a lock file, a
// name that is no number, another namespace and a deleted packed ref are
// not listed.
func TestNumbers_AsGitListsThem(t *testing.T) {
	w := newWorld(t)
	c := w.commits[0].String()
	for _, name := range []string{"a1/1", "a1/2", "a1/3", "b-2/7", "a1/x", "a1/07"} {
		w.git("update-ref", "refs/venom/checkpoints/"+name, c)
	}
	w.git("update-ref", "refs/venom/tools/a1/1/1", c)
	w.git("pack-refs", "--all")
	w.git("update-ref", "refs/venom/checkpoints/a1/4", c)                     // loose only
	w.git("update-ref", "refs/venom/checkpoints/a1/2", w.commits[1].String()) // loose and packed
	w.git("update-ref", "-d", "refs/venom/checkpoints/a1/3")                  // gone from packed-refs
	lock := filepath.Join(w.dir, ".git", "refs", "venom", "checkpoints", "a1", "5.lock")
	require.NoError(t, os.WriteFile(lock, []byte(c+"\n"), 0o644))

	got, err := Numbers(w.r)
	require.NoError(t, err)
	var listed []string
	for agent, ns := range got {
		for n := range ns {
			listed = append(listed, agent+"/"+itoa(n))
		}
	}
	sort.Strings(listed)
	var want []string
	for _, name := range strings.Split(w.git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/"), "\n") {
		name = strings.TrimPrefix(name, "refs/venom/checkpoints/")
		if name != "a1/x" && name != "a1/07" {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	assert.Equal(t, []string{"a1/1", "a1/2", "a1/4", "b-2/7"}, want)
	assert.Equal(t, want, listed)

	// None at all: no folder, no packed-refs.
	w2 := newWorld(t)
	got, err = Numbers(w2.r)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func itoa(n int) string { return strconv.Itoa(n) }
