package harness

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/harness/claude"
	"github.com/git-venom/git-venom/lib/harness/codex"
	"github.com/git-venom/git-venom/lib/harnessproc"
	"github.com/git-venom/git-venom/lib/journal"
)

// bound is a state where agent holds session, started by process p.
func bound(agent, harness, session string, p journal.Process) *agents.State {
	st := agents.New()
	st.Apply(&journal.Entry{Seq: 1, Type: journal.AgentRegistered, Agent: agent, Tree: "/t", Harness: harness})
	st.Apply(&journal.Entry{Seq: 2, Type: journal.AgentBinding, Agent: agent, HarnessSession: &session, Process: p})
	return st
}

// docs/harness.md#hook-agents: one agent per harness session.
func TestDefaultAgent_OnePerSession(t *testing.T) {
	const s1, s2 = "11111111-1111-4111-8111-aaaaaaaaaaaa", "22222222-2222-4222-8222-0123456789ab"
	self := journal.ProcessOf(harnessproc.Of(os.Getpid()))
	other := exec.Command("sleep", "30")
	require.NoError(t, other.Start())
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	live := journal.ProcessOf(harnessproc.Of(other.Process.Pid))

	assert.Equal(t, "claude", DefaultAgent(agents.New(), claude.Kind.Name, s1, self), "the first session")
	assert.Equal(t, "codex", DefaultAgent(agents.New(), codex.Kind.Name, s1, self))
	st := bound("claude", claude.Kind.Name, s1, live)
	assert.Equal(t, "claude", DefaultAgent(st, claude.Kind.Name, s1, self), "the bound session keeps its agent")
	assert.Equal(t, "claude-456789ab", DefaultAgent(st, claude.Kind.Name, s2, self), "beside another live session")
	assert.Equal(t, "claude", DefaultAgent(bound("claude", claude.Kind.Name, s1, self), claude.Kind.Name, s2, self),
		"a new session of the same process (/clear) is the same agent")
	assert.Equal(t, "claude", DefaultAgent(bound("claude", claude.Kind.Name, s1, journal.Process{}), claude.Kind.Name, s2, self),
		"no process recorded: not live")
	assert.Equal(t, "codex-456789ab", DefaultAgent(bound("codex", codex.Kind.Name, s1, live), codex.Kind.Name, s2, self))

	// The second session's agent keeps its session after the first exits.
	st.Apply(&journal.Entry{Seq: 3, Type: journal.AgentRegistered, Agent: "claude-456789ab", Tree: "/t", Harness: claude.Kind.Name})
	st.Apply(&journal.Entry{Seq: 4, Type: journal.AgentBinding, Agent: "claude-456789ab", HarnessSession: ptr(s2), Process: self})
	_ = other.Process.Kill()
	_ = other.Wait()
	assert.Equal(t, "claude-456789ab", DefaultAgent(st, claude.Kind.Name, s2, self))
	assert.Equal(t, "claude", DefaultAgent(st, claude.Kind.Name, "33333333-3333-4333-8333-333333333333", self),
		"the first session's process exited: a third session takes the name")
}

func ptr(s string) *string { return &s }
