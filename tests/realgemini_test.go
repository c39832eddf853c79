package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real Gemini CLI with git-venom's hooks installed: its sessions,
// turns and write_file edits are the agent's; a rollback of the files is
// told to the model at the next prompt, through BeforeAgent's
// additionalContext; and a command its shell tool runs is an agent's.
func TestRealGemini_TurnsEditsNoteAndCaller(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	g := env.UseRealGemini(t)
	env.Venom("checkpoint", "hook", "install", "gemini-cli").OK(t)
	env.Write(".gitignore", ".gemini/\n")
	env.Commit("ignore the harness's settings")

	g.Mock.Turn("Wrote it.", geminiCall("write_file", map[string]any{"file_path": env.Path("hello.txt"), "content": "hello\n"}))
	g.Prompt("write hello.txt")
	g.Mock.Turn("Changed it.", geminiCall("write_file", map[string]any{"file_path": env.Path("hello.txt"), "content": "hello again\n"}))
	g.Prompt("change hello.txt")

	reg := env.Records("agent.registered")
	require.Len(t, reg, 1)
	assert.Equal(t, "gemini", reg[0]["agent"])
	assert.Equal(t, "gemini-cli", reg[0]["harness"])
	require.NotEmpty(t, env.Records("agent.binding"), "SessionStart binds the session")
	edits := env.Records("edit.recorded")
	require.Len(t, edits, 2, "each write_file is recorded for its turn")
	assert.Equal(t, []any{"hello.txt"}, edits[0]["paths"])
	assert.Equal(t, "t1", edits[0]["turn"])
	assert.Equal(t, "t2", edits[1]["turn"])
	ends := env.Records("turn.ended")
	require.Len(t, ends, 2, "AfterAgent ends each turn")

	// The turn_end of t1 holds the first content; git says so.
	l := env.List(t, "--agent=gemini")
	var afterT1 string
	for _, c := range l.Checkpoints {
		if c.Reason == "turn_end" && c.Turn != nil && *c.Turn == "t1" {
			afterT1 = c.Checkpoint
		}
	}
	require.NotEmpty(t, afterT1, "%+v", l.Checkpoints)
	assert.Equal(t, "hello", env.Git("show", "refs/venom/checkpoints/gemini/"+strings.TrimPrefix(afterT1, "k")+":hello.txt"))

	// Gemini CLI cannot have its session rewound: files only.
	env.Rollback("--agent=gemini", "--checkpoint="+afterT1, "--restore=files")
	b, err := os.ReadFile(env.Path("hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))

	// The next prompt carries the note to the model; and the model's shell
	// command is an agent's: its real rollback is denied.
	out := env.Path("rollback-from-the-agent.txt")
	g.Mock.Turn("Tried.", geminiCall("run_shell_command", map[string]any{
		"command": "git venom-rollback --agent=gemini --checkpoint=k1 --restore=files --plan=p1-0000000000000000 --json >" +
			out + " 2>&1; echo exit=$? >>" + out}))
	g.Prompt("roll back to k1")
	reqs := g.Mock.Requests()
	require.NotEmpty(t, reqs)
	var noted bool
	for _, r := range reqs[len(reqs)-2:] {
		noted = noted || strings.Contains(r, "rolled back to their state after turn t1")
	}
	assert.True(t, noted, "the model is told of the rollback")
	assert.Len(t, env.Records("note.delivered"), 1)
	b, err = os.ReadFile(out)
	require.NoError(t, err, "the shell tool ran the command")
	assert.Contains(t, string(b), "denied.agent_caller")
	assert.Contains(t, string(b), "exit=4")
}
