package retention

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/state"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// cp is checkpoint k<n> of the given reason, taken age before now.
func cp(n int, reason string, age time.Duration) *agents.Checkpoint {
	return &agents.Checkpoint{N: n, Taken: journal.Taken{Checkpoint: fmt.Sprintf("k%d", n), Reason: reason,
		At: journal.Stamp(now.Add(-age))}}
}

func agentOf(state, isolation string, list ...*agents.Checkpoint) *agents.Agent {
	return &agents.Agent{ID: "a1", State: state, Isolation: isolation, Checkpoints: list}
}

func idsOfList(list []*agents.Checkpoint) []string {
	out := []string{}
	for _, c := range list {
		out = append(out, c.Checkpoint)
	}
	return out
}

const day = 24 * time.Hour

var policy = Policy{Keep: 2, KeepFor: 14 * day, KeepSafety: 30 * day, Now: now}

// venom.keep counts the turn, takeover, takeback, fork and rollback
// checkpoints only: manual and pre_rollback ones neither count nor go by
// it, and pruned or removed ones are not there to count.
func TestExpired_KeepCountsTheCountedReasonsOnly(t *testing.T) {
	a := agentOf("", agents.InPlace,
		cp(1, "turn_start", time.Hour), cp(2, "fork", time.Hour), cp(3, "manual", time.Hour),
		cp(4, "rollback", time.Hour), cp(5, "pre_rollback", time.Hour), cp(6, "takeover", time.Hour),
		cp(7, "takeback", time.Hour), cp(8, "turn_end", time.Hour))
	assert.Equal(t, []string{"k1", "k2", "k4", "k6"}, idsOfList(Expired(a, policy)),
		"the newest two counted (k7, k8) stay, manual k3 and pre_rollback k5 stay")

	a.Checkpoints[7].Pruned, a.Checkpoints[6].Removed = true, true
	assert.Equal(t, []string{"k1", "k2"}, idsOfList(Expired(a, policy)),
		"a pruned or removed checkpoint counts for nothing: k4 and k6 are now the two kept")

	keep1 := policy
	keep1.Keep = 1
	a = agentOf("", agents.InPlace, cp(1, "turn_start", time.Hour), cp(2, "turn_end", time.Hour))
	assert.Equal(t, []string{"k1"}, idsOfList(Expired(a, keep1)))
	keep1.Keep = 0
	assert.Equal(t, []string{"k1"}, idsOfList(Expired(a, keep1)), "the newest never goes by pruning")
}

// Ages go strictly past their limit: a checkpoint exactly keepFor (or
// keepSafety) old stays, one a millisecond older goes; a time that does not
// parse proves no age.
func TestExpired_AgeBoundaries(t *testing.T) {
	ms := time.Millisecond
	p := policy
	p.Keep = 100
	a := agentOf("", agents.InPlace,
		cp(1, "turn_end", 14*day+ms), cp(2, "turn_end", 14*day),
		cp(3, "manual", 14*day+ms), cp(4, "manual", 14*day),
		cp(5, "pre_rollback", 30*day+ms), cp(6, "pre_rollback", 30*day), cp(7, "pre_rollback", 29*day),
		cp(8, "some_future_reason", 14*day+ms),
		cp(9, "turn_end", 0), cp(10, "turn_end", 400*day))
	a.Checkpoints[8].At = "not a time"
	assert.Equal(t, []string{"k1", "k3", "k5", "k8"}, idsOfList(Expired(a, p)),
		"an unknown reason goes by keepFor, as manual; the newest (k10) stays however old")
}

// An archived agent's newest checkpoint goes too; clean's rules then add,
// by isolation, what the agent's own tree no longer needs.
func TestExpired_ArchivedByIsolation(t *testing.T) {
	list := func() []*agents.Checkpoint {
		return []*agents.Checkpoint{cp(1, "turn_end", time.Hour), cp(2, "pre_rollback", time.Hour),
			cp(3, "pre_rollback", 31*day), cp(4, "manual", time.Hour), cp(5, "turn_end", 20*day)}
	}
	p := policy
	p.Keep = 100
	live := agentOf("", agents.InPlace, list()...)
	assert.Equal(t, []string{"k3"}, idsOfList(Expired(live, p)), "k5 is old but the newest")

	inPlace := agentOf(agents.Archived, agents.InPlace, list()...)
	assert.Equal(t, []string{"k1", "k3", "k4", "k5"}, idsOfList(Expired(inPlace, p)),
		"in place, all but the young safety checkpoint k2")

	copied := agentOf(agents.Archived, agents.Copy, list()...)
	assert.Equal(t, []string{"k3", "k5"}, idsOfList(Expired(copied, p)),
		"a copy's go with its folder: only what the policy expires, newest included")

	wt := agentOf(agents.Archived, agents.Worktree, list()...)
	wt.Tree = t.TempDir()
	assert.Equal(t, []string{"k3", "k5"}, idsOfList(Expired(wt, p)), "a worktree still there keeps them")
	wt.Tree = filepath.Join(wt.Tree, "removed")
	assert.Equal(t, []string{"k1", "k2", "k3", "k4", "k5"}, idsOfList(Expired(wt, p)), "a removed worktree's all go")
}

// world is a repository whose log and refs hold agent a1's checkpoints,
// written as a capture writes them: a commit, its ref, its record.
type world struct {
	t   *testing.T
	dir string
	s   *state.Store
	tx  *state.Txn
}

func newWorld(t *testing.T, keep int) *world {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	w := &world{t: t, dir: dir, s: clitest.Store(t, dir)}
	w.s.Config.Keep = keep
	w.begin()
	_, err := w.tx.Append(journal.AgentRegistered, journal.Registered{Agent: "a1", Tree: dir,
		Isolation: agents.InPlace, Harness: "none"})
	require.NoError(t, err)
	return w
}

func (w *world) begin() {
	tx, err := w.s.Begin(context.Background(), lock.Holder{Op: "test"}, errcode.TimeoutLock)
	require.NoError(w.t, err)
	w.tx = tx
	w.t.Cleanup(tx.End)
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return gittest.Run(w.t, w.dir, "", []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}, args...)
}

// take makes checkpoint k<n>: a commit of its own, its ref and its record.
func (w *world) take(n int, reason string) string {
	w.t.Helper()
	commit := w.git("commit-tree", "-m", fmt.Sprintf("k%d", n), "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	w.git("update-ref", fmt.Sprintf("refs/venom/checkpoints/a1/%d", n), commit)
	_, err := w.tx.Append(journal.CheckpointTaken, journal.Taken{Agent: "a1", Checkpoint: fmt.Sprintf("k%d", n),
		Reason: reason, At: journal.Stamp(journal.Now()), Repos: []journal.RepoState{{Repo: ".", Path: w.dir, Commit: commit}}})
	require.NoError(w.t, err)
	return commit
}

func (w *world) refs() string {
	return w.git("for-each-ref", "--format=%(refname)", "refs/venom/")
}

// records are the log's records of one type, as its lines say; a line
// that is not JSON is passed over.
func (w *world) records(typ string) []map[string]any {
	f, err := os.Open(w.s.Repo.Log)
	require.NoError(w.t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

func TestPrune_DeletesTheExpiredRefsAndLogsThem(t *testing.T) {
	w := newWorld(t, 2)
	for n := 1; n <= 4; n++ {
		w.take(n, "turn_end")
	}
	dry, err := PruneDryRun(w.tx, "")
	require.NoError(t, err)
	require.Len(t, dry, 1)
	assert.Equal(t, []string{"k1", "k2"}, dry[0].Pruned)
	assert.Len(t, strings.Fields(w.refs()), 4, "a dry run deletes nothing")

	res, err := Prune(context.Background(), w.tx, "")
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, []string{"k1", "k2"}, res[0].Pruned)
	assert.Empty(t, res[0].Failed)
	assert.Equal(t, "refs/venom/checkpoints/a1/3\nrefs/venom/checkpoints/a1/4", w.refs())
	pruned := w.records(journal.CheckpointPruned)
	require.Len(t, pruned, 1)
	assert.Equal(t, []any{"k1", "k2"}, pruned[0]["checkpoints"])

	res, err = Prune(context.Background(), w.tx, "")
	require.NoError(t, err)
	assert.Empty(t, res, "nothing more goes")
	assert.Len(t, w.records(journal.CheckpointPruned), 1, "and nothing more is logged")
}

// A ref someone moved is left alone (doctor reports it) and stops counting;
// a ref someone deleted is recorded as gone, expiring or not.
func TestPrune_MovedRefLeftAloneLostRefRecorded(t *testing.T) {
	w := newWorld(t, 2)
	for n := 1; n <= 5; n++ {
		w.take(n, "turn_end")
	}
	other := w.git("commit-tree", "-m", "someone else's", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	w.git("update-ref", "refs/venom/checkpoints/a1/1", other)
	w.git("update-ref", "-d", "refs/venom/checkpoints/a1/4")

	res, err := Prune(context.Background(), w.tx, "a1")
	require.NoError(t, err)
	assert.Equal(t, []string{"k1", "k2", "k3", "k4"}, res[0].Pruned)
	assert.Equal(t, other, w.git("rev-parse", "refs/venom/checkpoints/a1/1"), "the moved ref holds what it held")
	assert.Equal(t, "refs/venom/checkpoints/a1/1\nrefs/venom/checkpoints/a1/5", w.refs())
}

// A damaged log may hide a checkpoint's record: no ref is deleted on its
// word until it is mended.
func TestPrune_RefusesADamagedLog(t *testing.T) {
	w := newWorld(t, 1)
	for n := 1; n <= 3; n++ {
		w.take(n, "turn_end")
	}
	w.tx.End()
	f, err := os.OpenFile(w.s.Repo.Log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{not a record}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	w.begin()
	refs := w.refs()

	_, err = Prune(context.Background(), w.tx, "")
	e, ok := errcode.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errcode.FailedState, e.Code)
	assert.Contains(t, e.Error(), "no ref is deleted")
	assert.Equal(t, refs, w.refs())
	_, err = Clean(context.Background(), w.tx, w.tx.State.Agents["a1"])
	require.Error(t, err)
	assert.Equal(t, refs, w.refs())
	assert.Empty(t, w.records(journal.AgentArchived), "clean archived on a damaged log")
}

// clean archives an in-place agent and removes its refs, keeping a young
// safety checkpoint, counted as kept.
func TestClean_InPlaceKeepsYoungSafety(t *testing.T) {
	w := newWorld(t, 10)
	w.take(1, "turn_end")
	w.take(2, "pre_rollback")
	w.take(3, "rollback")
	dry := CleanDryRun(w.tx, w.tx.State.Agents["a1"])
	assert.Equal(t, []Removed{{Agent: "a1", Repo: ".", Removed: 2, Kept: 1, Failed: []Failed{}}}, dry.Checkpoints)
	assert.Len(t, strings.Fields(w.refs()), 3)

	res, err := Clean(context.Background(), w.tx, w.tx.State.Agents["a1"])
	require.NoError(t, err)
	assert.Equal(t, dry.Checkpoints, res.Checkpoints, "the real call did what the dry run said")
	assert.Equal(t, "refs/venom/checkpoints/a1/2", w.refs())
	assert.Len(t, w.records(journal.AgentArchived), 1)
	removed := w.records(journal.CheckpointRemoved)
	require.Len(t, removed, 1)
	assert.Equal(t, []any{"k1", "k3"}, removed[0]["checkpoints"])
}
