package refs

import (
	"context"
	"os"
	"testing"
	"time"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/repo"
)

// CommitObject's bytes are those libgit2 writes for Commit, id included,
// with and without a parent, in UTC and in zones east and west.
func TestCommitObject_SameAsLibgit2(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	id := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	gittest.Run(t, dir, "", id, "commit", "-q", "--allow-empty", "-m", "base")
	r, err := repo.Open(context.Background(), dir, os.Environ())
	require.NoError(t, err)
	defer r.Free()
	tree, err := git.NewOid(gittest.Run(t, dir, "", nil, "rev-parse", "HEAD^{tree}"))
	require.NoError(t, err)
	head, err := git.NewOid(gittest.Run(t, dir, "", nil, "rev-parse", "HEAD"))
	require.NoError(t, err)
	turn := "t3"
	msg := Message("a1", "k2", "turn_end", &turn)
	for _, when := range []time.Time{
		time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 6, 10, 0, 0, 5e6, time.FixedZone("x", -(7*3600+30*60))),
		time.Date(2026, 3, 6, 10, 0, 0, 0, time.FixedZone("y", 5*3600+45*60)),
	} {
		for _, parent := range []*git.Oid{head, nil} {
			want, err := Commit(r, tree, parent, msg, when)
			require.NoError(t, err)
			id, data := CommitObject(tree, parent, msg, when)
			require.Equal(t, want.String(), id.String())
			require.Equal(t, gittest.Run(t, dir, "", nil, "cat-file", "commit", want.String()), string(data[:len(data)-1]))
		}
	}
}
