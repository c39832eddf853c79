package codex

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/state"
)

// Adapter is codex's rewind (docs/rollback.md#conversation): thread/fork {threadId, lastTurnId,
// excludeTurns: true} in an app-server started for the purpose, then
// thread/unsubscribe. The new thread's id is the result; the source thread
// is only read.
type Adapter struct{}

// Binary is the codex program, found on PATH.
var Binary = "codex"

// ClientVersion is what git-venom tells the app-server it is.
var ClientVersion = "0.0.0"

// HasHarnessID: codex forks by the turn's id.
func (Adapter) HasHarnessID(t *agents.Turn) bool { return t.HarnessTurn != "" }

// CanRewind: every turn with a Codex turn id.
func (Adapter) CanRewind(a *agents.Agent, t *agents.Turn) bool {
	return t != nil && t.HarnessTurn != ""
}

// Ready finds the codex program before a rollback writes anything: the
// fork needs it, and a rollback that would fail after its safety
// checkpoint is refused in preflight instead.
func (Adapter) Ready(*agents.Agent) error {
	if _, err := exec.LookPath(Binary); err != nil {
		return fmt.Errorf("%s is not on PATH", Binary)
	}
	return nil
}

// Rewind forks the agent's thread through turn t, within venom.timeout.
func (Adapter) Rewind(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn, _ conversation.Options) (*conversation.Rewound, error) {
	thread := t.Session // the thread the turn ran in; turn ids stay valid in forks
	if thread == "" {
		thread = a.Binding.Session
	}
	if thread == "" {
		return nil, errcode.Newf(errcode.NotFoundHarnessSession, map[string]string{"agent": a.ID},
			"agent %s has no Codex thread bound; its hooks bind one", a.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, s.Config.Timeout)
	defer cancel()
	id, err := forkThread(ctx, a.Tree, gitcli.CleanEnv(s.Environ), thread, t.HarnessTurn)
	if err != nil {
		return nil, mapErr(ctx, a.ID, thread, t.HarnessTurn, err)
	}
	return &conversation.Rewound{HarnessSession: id, Resume: []string{"codex", "resume", id}}, nil
}

func forkThread(ctx context.Context, dir string, env []string, thread, turn string) (string, error) {
	c, err := Start(ctx, Binary, dir, env)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Initialize(ctx, ClientVersion); err != nil {
		return "", err
	}
	th, err := c.Fork(ctx, thread, turn)
	if err != nil {
		return "", err
	}
	// The fork exists now; an unsubscribe that fails changes nothing.
	_ = c.Unsubscribe(ctx, th.ID)
	return th.ID, nil
}

// mapErr turns the app-server's answers into registry codes (docs/errors.md): a missing thread is
// not_found.harness_session, any other refusal conflict.harness_fork_refused,
// running out of venom.timeout timeout.harness_request.
func mapErr(ctx context.Context, agent, thread, turn string, err error) error {
	data := map[string]string{"agent": agent, "harness_session": thread, "harness_turn": turn}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return errcode.Newf(errcode.TimeoutHarnessRequest, data,
			"codex app-server did not fork thread %s within venom.timeout", thread).Wrap(err)
	}
	var rpc *RPCError
	if errors.As(err, &rpc) {
		msg := strings.ToLower(rpc.Message)
		if strings.Contains(msg, "no rollout found") || strings.Contains(msg, "invalid session id") ||
			strings.Contains(msg, "thread not found") {
			return errcode.Newf(errcode.NotFoundHarnessSession, data, "Codex has no thread %s: %s", thread, rpc.Message).Wrap(err)
		}
		data["message"] = rpc.Message
		return errcode.Newf(errcode.ConflictHarnessForkRefused, data, "Codex refused to fork thread %s: %s", thread, rpc.Message).Wrap(err)
	}
	return errcode.Newf(errcode.ConflictHarnessForkRefused, data, "codex app-server could not fork thread %s: %v", thread, err).Wrap(err)
}
