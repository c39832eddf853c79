package share

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
)

const machine = "0123abcd-0000-4000-8000-00000000beef"

func TestCheckRemote_OnePartOfARefName(t *testing.T) {
	for _, good := range []string{"origin", "my.remote-1", "A_b", strings.Repeat("r", 64)} {
		assert.NoError(t, CheckRemote(good), good)
	}
	for _, bad := range []string{"", "a/b", "..", "x..y", "x.lock", "-x", ".x", "a b", strings.Repeat("r", 65), "https://h/r.git"} {
		err := CheckRemote(bad)
		e, ok := errcode.As(err)
		require.True(t, ok, "%q was taken", bad)
		assert.Equal(t, errcode.InvalidParamsRemote, e.Code)
	}
}

// Only the names a push makes parse, and they map one for one between the
// remote's namespace and the local copy's.
func TestParseShared_OnlyWhatAPushMakes(t *testing.T) {
	r, ok := parseShared(machine + "/a1/12")
	require.True(t, ok)
	assert.Equal(t, sharedRef{machine: machine, agent: "a1", n: 12}, r)
	assert.Equal(t, RemotePrefix+machine+"/a1/12", remoteRef(r))
	assert.Equal(t, LocalPrefix+"origin/"+machine+"/a1/12", localRef("origin", r))
	r, ok = parseShared(machine + "/a1/log")
	require.True(t, ok)
	assert.Equal(t, 0, r.n)
	assert.Equal(t, LocalPrefix+"origin/"+machine+"/a1/log", localRef("origin", r))

	for _, bad := range []string{
		machine + "/a1/012", machine + "/a1/0", machine + "/a1/k1", machine + "/a1/-1", machine + "/a1/1/x",
		machine + "/A1/1", machine + "/a1", "not-a-machine/a1/1", strings.ToUpper(machine) + "/a1/1",
		machine + "/../1", machine + "/a1/LOG",
	} {
		_, ok := parseShared(bad)
		assert.False(t, ok, bad)
	}
	id := CopyID("origin", machine, "a1")
	rm, m, a := Parts(id)
	assert.Equal(t, []string{"origin", machine, "a1"}, []string{rm, m, a})
	rm, m, a = Parts("origin/a1")
	assert.Equal(t, []string{"", "", ""}, []string{rm, m, a})
	assert.True(t, IsCopy(id))
	assert.False(t, IsCopy("a1"))
}

// side is one repository with its store, and origin a bare remote.
type side struct {
	t   *testing.T
	dir string
	s   *state.Store
}

func newSide(t *testing.T, remote string) *side {
	t.Helper()
	w := &side{t: t, dir: t.TempDir()}
	w.git("init", "-q")
	w.git("remote", "add", "origin", remote)
	w.s = clitest.Store(t, w.dir)
	return w
}

func (w *side) git(args ...string) string {
	w.t.Helper()
	return gittest.Run(w.t, w.dir, "", []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}, args...)
}

func (w *side) begin() *state.Txn {
	tx, err := w.s.Begin(context.Background(), lock.Holder{Op: "test"}, errcode.TimeoutLock)
	require.NoError(w.t, err)
	w.t.Cleanup(tx.End)
	return tx
}

// agent logs agent a1 with n checkpoints, each a checkpoint commit of
// its own file, and its ref.
func (w *side) agent(n int) *agents.Agent {
	tx := w.begin()
	_, err := tx.Append(journal.AgentRegistered, journal.Registered{Agent: "a1", Tree: w.dir, Isolation: agents.InPlace, Harness: "none"})
	require.NoError(w.t, err)
	for k := 1; k <= n; k++ {
		blob := strings.TrimSpace(gittest.Run(w.t, w.dir, "content "+string(rune('0'+k))+"\n", nil, "hash-object", "-w", "--stdin"))
		tree, err := git.NewOid(gittest.Run(w.t, w.dir, "100644 blob "+blob+"\tf.txt\n", nil, "mktree"))
		require.NoError(w.t, err)
		id := "k" + string(rune('0'+k))
		c, err := refs.Commit(w.s.Repo, tree, nil, refs.Message("a1", id, "turn_end", nil), time.Now())
		require.NoError(w.t, err)
		require.NoError(w.t, refs.Create(w.s.Repo, "a1", k, c))
		_, err = tx.Append(journal.CheckpointTaken, journal.Taken{Agent: "a1", Checkpoint: id, Reason: "turn_end",
			At: journal.Stamp(journal.Now()), Repos: []journal.RepoState{{Repo: ".", Path: w.dir, Commit: c.String()}}})
		require.NoError(w.t, err)
	}
	a := tx.State.Agents["a1"]
	tx.End()
	return a
}

// A push writes the agent's checkpoints and log under the remote's
// refs/venom/shared/<machine>/a1/; a fetch on another machine checks them
// and writes them under refs/venom/remotes/origin/ only, refusing what no
// push makes, and the copy reads back with its checkpoints.
func TestPushThenFetch_OnlyUnderTheRemotesNamespace(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "remote.git")
	gittest.Run(t, filepath.Dir(bare), "", nil, "init", "-q", "--bare", bare)
	here := newSide(t, bare)
	a := here.agent(2)
	pushed, err := Push(context.Background(), here.s, a, "origin")
	require.NoError(t, err)
	assert.Equal(t, []string{"k1", "k2"}, pushed.Checkpoints)
	m := pushed.Machine
	assert.Equal(t, RemotePrefix+m+"/a1/1\n"+RemotePrefix+m+"/a1/2\n"+RemotePrefix+m+"/a1/log",
		gittest.Run(t, bare, "", nil, "for-each-ref", "--format=%(refname)"))
	assert.Equal(t, here.git("rev-parse", "refs/venom/checkpoints/a1/2"),
		gittest.Run(t, bare, "", nil, "rev-parse", RemotePrefix+m+"/a1/2"))

	// Planted on the remote: k1's commit as a k9 (its trailers say k1), and
	// a name no push makes.
	gittest.Run(t, bare, "", nil, "update-ref", RemotePrefix+m+"/a1/9", here.git("rev-parse", "refs/venom/checkpoints/a1/1"))
	gittest.Run(t, bare, "", nil, "update-ref", RemotePrefix+m+"/a1/x", here.git("rev-parse", "refs/venom/checkpoints/a1/1"))

	there := newSide(t, bare)
	tx := there.begin()
	fetched, err := Fetch(context.Background(), there.s, "origin")
	require.NoError(t, err)
	tx.End()
	require.Len(t, fetched.Copies, 1)
	assert.Equal(t, Copy{Copy: "origin/" + m + "/a1", Machine: m, Agent: "a1", Checkpoints: []string{"k1", "k2"}}, fetched.Copies[0])
	refused := map[string]string{}
	for _, r := range fetched.Refused {
		refused[r.Ref] = r.Reason
	}
	assert.Equal(t, map[string]string{RemotePrefix + m + "/a1/9": RefusedTrailers, RemotePrefix + m + "/a1/x": RefusedName}, refused)
	local := LocalPrefix + "origin/" + m + "/a1/"
	assert.Equal(t, local+"1\n"+local+"2\n"+local+"log", there.git("for-each-ref", "--format=%(refname)"),
		"only the copy's refs, nothing under refs/venom/checkpoints or elsewhere")

	copies, err := Copies(context.Background(), there.s)
	require.NoError(t, err)
	assert.Equal(t, []string{"origin/" + m + "/a1"}, copies)
	_, c, err := ReadCopy(context.Background(), there.s, copies[0])
	require.NoError(t, err)
	var live []string
	for _, k := range c.Checkpoints {
		if k.Live() {
			live = append(live, k.Checkpoint)
		}
	}
	assert.Equal(t, []string{"k1", "k2"}, live)
	_, _, err = ReadCopy(context.Background(), there.s, "origin/"+m+"/zz")
	e, ok := errcode.As(err)
	require.True(t, ok)
	assert.Equal(t, errcode.NotFoundAgent, e.Code)
	// A stop signal while git writes a large log out is the signal, not a
	// log that fails its checks.
	defer func(n uint64) { inProcessLog = n }(inProcessLog)
	inProcessLog = 0
	_, c, err = ReadCopy(context.Background(), there.s, copies[0])
	require.NoError(t, err, "the log written by git")
	assert.Len(t, c.Checkpoints, 2)
	stopped, stop := context.WithCancelCause(context.Background())
	stop(errors.New("interrupt signal received"))
	_, _, err = ReadCopy(stopped, there.s, copies[0])
	e, ok = errcode.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errcode.FailedInterrupted, e.Code)

	_, err = Push(context.Background(), here.s, a, "nowhere")
	require.Error(t, err, "a remote git does not know")
}
