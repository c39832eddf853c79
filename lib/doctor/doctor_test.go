package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

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

const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

var ident = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}

// world is a repository whose log names agent a1's checkpoints k1..kn,
// each with its own commit and ref, as captures leave them.
type world struct {
	t       *testing.T
	dir     string
	s       *state.Store
	commits []string
}

func newWorld(t *testing.T, n int) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir()}
	w.git("init", "-q")
	w.s = clitest.Store(t, w.dir)
	tx, err := w.s.Begin(context.Background(), lock.Holder{Op: "test"}, errcode.TimeoutLock)
	require.NoError(t, err)
	defer tx.End()
	_, err = tx.Append(journal.AgentRegistered, journal.Registered{Agent: "a1", Tree: w.dir, Isolation: agents.InPlace, Harness: "none"})
	require.NoError(t, err)
	for k := 1; k <= n; k++ {
		c := w.commit(fmt.Sprintf("k%d", k))
		w.commits = append(w.commits, c)
		w.git("update-ref", ref(k), c)
		_, err = tx.Append(journal.CheckpointTaken, journal.Taken{Agent: "a1", Checkpoint: fmt.Sprintf("k%d", k),
			Reason: "turn_end", At: journal.Stamp(journal.Now()), Repos: []journal.RepoState{{Repo: ".", Path: w.dir, Commit: c}}})
		require.NoError(t, err)
	}
	return w
}

func ref(k int) string { return fmt.Sprintf("refs/venom/checkpoints/a1/%d", k) }

func (w *world) git(args ...string) string {
	w.t.Helper()
	return gittest.Run(w.t, w.dir, "", ident, args...)
}

func (w *world) commit(msg string) string { return w.git("commit-tree", "-m", msg, emptyTree) }

func (w *world) check(id string) Check {
	w.t.Helper()
	for _, c := range Run(context.Background(), w.s).Checks {
		if c.ID == id {
			return c
		}
	}
	w.t.Fatalf("no check %s", id)
	return Check{}
}

// A ref no record names and a ref that moved are found; the fix doctor
// gives, run by a shell, puts them right, and doctor itself changed
// nothing.
func TestRefs_FixPutsMovedAndOrphanRefsRight(t *testing.T) {
	w := newWorld(t, 2)
	other := w.commit("someone else's")
	w.git("update-ref", ref(2), other)
	w.git("update-ref", ref(9), other)
	refs := w.git("for-each-ref", "refs/venom/")
	log, err := os.ReadFile(w.s.Repo.Log)
	require.NoError(t, err)

	c := w.check("checkpoints.refs")
	assert.Equal(t, Fail, c.Status, "a logged checkpoint whose ref moved fails")
	assert.Contains(t, c.Message, "1 no log record names: "+ref(9))
	assert.Contains(t, c.Message, "1 no longer hold the logged commit: "+ref(2))
	require.NotNil(t, c.Fix)
	assert.Equal(t, refs, w.git("for-each-ref", "refs/venom/"), "doctor only reads")
	after, err := os.ReadFile(w.s.Repo.Log)
	require.NoError(t, err)
	assert.Equal(t, log, after)

	fix := exec.Command("sh", "-c", *c.Fix)
	fix.Dir = w.dir
	out, err := fix.CombinedOutput()
	require.NoError(t, err, "%s: %s", *c.Fix, out)
	assert.Equal(t, w.commits[1], w.git("rev-parse", ref(2)), "the logged commit is back")
	assert.Equal(t, w.commits[0]+" commit\t"+ref(1)+"\n"+w.commits[1]+" commit\t"+ref(2), w.git("for-each-ref", "refs/venom/"))
	c = w.check("checkpoints.refs")
	assert.Equal(t, OK, c.Status, c.Message)
	assert.Nil(t, c.Fix)
}

// While the log has damage, a ref no whole record names may be a damaged
// record's checkpoint: doctor advises keeping every ref, and fails the log
// with how to mend it.
func TestRefs_DamagedLogAdvisesNoDeletion(t *testing.T) {
	w := newWorld(t, 1)
	w.git("update-ref", ref(2), w.commit("k2, whose record is damaged"))
	f, err := os.OpenFile(w.s.Repo.Log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":3,"ts":"2026-11-30T12:00:00.000Z","type":"checkpoint.taken","agent":"a1","checkpoint":"k2","rea` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	c := w.check("checkpoints.refs")
	assert.Equal(t, Warn, c.Status)
	assert.Contains(t, c.Message, "they may be its damaged records' checkpoints")
	require.NotNil(t, c.Fix)
	assert.Equal(t, keepRefs, *c.Fix)
	assert.NotContains(t, *c.Fix, "update-ref -d")

	l := w.check("state.log")
	assert.Equal(t, Fail, l.Status)
	assert.Contains(t, l.Message, "1 damaged line inside the log (not a torn tail): line 3")
	assert.Contains(t, *l.Fix, "no command rewrites the log")
}

// A torn tail is a warning (the next writer cuts it); a rollback that
// started and never ended, while nobody holds the lock, a failure.
func TestState_TornTailAndUnfinishedRollback(t *testing.T) {
	w := newWorld(t, 1)
	f, err := os.OpenFile(w.s.Repo.Log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":3,"ts":"2026-11-30T12:00:00.000Z","type":"rollback.started","agent":"a1","checkpoint":"k1","safety":"k1","restore":"files","plan":"p1"}` + "\n" + `{"seq":4,"ts":"2026`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	c := w.check("state.log")
	assert.Equal(t, Warn, c.Status)
	assert.Contains(t, c.Message, "torn line left by a crash, after seq 3")
	r := w.check("state.rollback")
	assert.Equal(t, Fail, r.Status)
	assert.Contains(t, r.Message, "a1")
	assert.Contains(t, *r.Fix, "git venom-diff --agent=a1 k1")
	rep := Run(context.Background(), w.s)
	assert.False(t, rep.OK, "a failed check fails the report")
}

func TestGitVersion_OK(t *testing.T) {
	w := newWorld(t, 0)
	c := w.check("checkpoints.git")
	assert.Equal(t, OK, c.Status, c.Message)
	assert.Regexp(t, `^git \d+\.\d+\.\d+$`, c.Message)
	assert.True(t, Run(context.Background(), w.s).OK)
}
