package rollback

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/state"
)

// fakeHarness rewinds by naming a new session, or fails as told.
type fakeHarness struct{ fail error }

func (f *fakeHarness) CanRewind(*agents.Agent, *agents.Turn) bool { return true }

func (f *fakeHarness) Rewind(_ context.Context, _ *state.Store, _ *agents.Agent, t *agents.Turn,
	_ conversation.Options) (*conversation.Rewound, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	return &conversation.Rewound{HarnessSession: "new-session-through-" + t.ID, Resume: []string{"fake", "--resume"}}, nil
}

// twoTurns makes an agent of harness h with turns t1 and t2 and returns the store.
func twoTurns(t *testing.T, h string) (*state.Store, string) {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	ctx := context.Background()
	s := clitest.Store(t, dir)
	take := func(reason, end string) {
		_, err := checkpoints.Take(ctx, s, checkpoints.Request{Registration: checkpoints.Registration{Agent: "a1",
			Isolation: "worktree", Harness: h}, Reason: reason, HarnessEnd: end})
		require.NoError(t, err)
	}
	file := filepath.Join(dir, "f.txt")
	take("turn_start", "")
	require.NoError(t, os.WriteFile(file, []byte("t1\n"), 0o644))
	take("turn_end", "end-of-t1") // k2: through t1
	take("turn_start", "")
	require.NoError(t, os.WriteFile(file, []byte("t2\n"), 0o644))
	take("turn_end", "end-of-t2")
	return s, file
}

func TestRewindGoesWithTheFiles(t *testing.T) {
	conversation.Register("fake-ok", &fakeHarness{})
	s, file := twoTurns(t, "fake-ok")
	ctx := context.Background()
	req := Request{Agent: "a1", Options: plan.Options{Checkpoint: "k2", Restore: "all"}, DryRun: true, HookFiles: noHookFiles}
	p, err := DryRun(ctx, s, req)
	require.NoError(t, err)
	require.True(t, p.Conversation.Rewinds)
	require.Equal(t, []string{"t2"}, p.Conversation.Drops)
	req.DryRun, req.Plan = false, p.ID
	res, err := Run(ctx, s, req)
	require.NoError(t, err)
	require.Equal(t, "new-session-through-t1", res.Conversation.HarnessSession)
	b, _ := os.ReadFile(file)
	require.Equal(t, "t1\n", string(b))
	_, st, err := s.Read()
	require.NoError(t, err)
	a := st.Agent("a1")
	require.Equal(t, "new-session-through-t1", a.Binding.Session)
	require.True(t, a.Turn("t2").Dropped)
	require.Nil(t, a.NotePending, "files and conversation went together: no note")
}

func TestRewindFailureChangesNoFile(t *testing.T) {
	conversation.Register("fake-fail", &fakeHarness{fail: errcode.Newf(errcode.TimeoutHarnessRequest, nil, "no answer")})
	s, file := twoTurns(t, "fake-fail")
	ctx := context.Background()
	req := Request{Agent: "a1", Options: plan.Options{Checkpoint: "k2", Restore: "all"}, DryRun: true, HookFiles: noHookFiles}
	p, err := DryRun(ctx, s, req)
	require.NoError(t, err)
	req.DryRun, req.Plan = false, p.ID
	_, err = Run(ctx, s, req)
	require.True(t, errcode.Is(err, errcode.TimeoutHarnessRequest), "%v", err)
	b, _ := os.ReadFile(file)
	require.Equal(t, "t2\n", string(b), "a file moved though the conversation could not")
	l, err := journal.Load(s.Repo.Log)
	require.NoError(t, err)
	last := l.Entries[len(l.Entries)-1]
	require.Equal(t, journal.RollbackEnded, last.Type)
	require.Equal(t, "timeout.harness_request", last.Code)
	require.False(t, *last.OK)
}

// noHookFiles: these trees have no harness's hook settings.
func noHookFiles(string) map[string]plan.HookFile { return nil }
