package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/checkpointcmd"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/clitest"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/ui"
)

// hookRun is a turn's first two hook calls on a fresh repository, read
// by run: the prompt, then a shell tool call that changed a file. It
// returns the exit codes, the streams and the types of the log records
// written, with the repository's path as $REPO. The repository and its
// HOME are a copy of fixture's, the run's own.
func hookRun(t *testing.T, fixture *clitest.World, run func(*cli.Env, any, []string) int, args []string) (code, out, errOut, log string) {
	from, root := filepath.Dir(fixture.Dir), t.TempDir()
	gittest.CopyTree(t, from, root)
	dir, environ := filepath.Join(root, "repo"), []string{}
	for _, kv := range fixture.Environ {
		environ = append(environ, strings.ReplaceAll(kv, from, root))
	}
	repo := strings.NewReplacer(dir, "$REPO")
	for _, event := range []string{"UserPromptSubmit", "PostToolUse"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte(event+"\n"), 0o644))
		streams, o, e := ui.Test()
		streams.In = strings.NewReader(`{"session_id":"7ed25220-ebd9-4d8a-a85d-0225263a02da","transcript_path":"","cwd":"` +
			dir + `","hook_event_name":"` + event + `","prompt":"go","prompt_id":"p1","tool_name":"Bash",` +
			`"tool_input":{"command":"echo x > b.txt"},"tool_use_id":"toolu_1"}`)
		env := &cli.Env{Ctx: context.Background(), UI: streams, Environ: environ, Dir: dir,
			Name: "git-venom-checkpoint", JSON: cli.WantsJSON(args)}
		code += fmt.Sprintf("%d ", run(env, checkpointcmd.New(), args))
		out += repo.Replace(o.String())
		errOut += repo.Replace(e.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".git", "venom", "log.jsonl"))
	for _, line := range strings.Split(string(b), "\n") {
		if _, rest, ok := strings.Cut(line, `"type":"`); ok {
			log += rest[:strings.IndexByte(rest, '"')] + " "
		}
	}
	return code, out, errOut, log
}

// A hook call gives the same exit code, output, errors and log records
// whether git-venom-checkpoint's own reader or kong reads its arguments,
// for the calls hook install writes and for bad ones.
func TestRun_HookCallSameWithoutKong(t *testing.T) {
	fixture := clitest.New(t)
	for _, args := range [][]string{
		{"hook", "claude-code"},
		{"hook", "claude-code", "--agent=a1", "--isolation=worktree", "--per-tool"},
		{"hook", "claude-code", "--agent", "a1", "--parent", "p0", "--json", "-q", "--color=never"},
		{"hook", "claude-code", "--agent=Bad Name!"},
		{"hook", "claude-code", `{"type":"agent-turn-complete"}`},
		{"hook", "codex", "--agent=a1", `{"type":"agent-turn-complete","turn-id":"1"}`},
		{"hook", "claude-code", "--isolation=bogus"},
		{"hook", "claude-code", "--isolation", "worktre"},
		{"hook", "claude-code", "--color=sometimes", "--json"},
		{"hook", "claude-code", "--bogus"},
		{"hook", "claude-code", "one", "two"},
		{"hook", "claude-code", "--agent"},
		{"hook", "claude-code", "--agent=a", "--agent=b"},
		{"hook", "claude-code", "--per-tool=maybe"},
		{"hook", "claude-code", "--version"},
		{"hook", "claude-code", "-h"},
		{"hook", "claude-cod"},
	} {
		wantCode, wantOut, wantErr, wantLog := hookRun(t, fixture, cli.RunKong, args)
		code, out, errOut, log := hookRun(t, fixture, cli.Run, args)
		assert.Equal(t, wantCode, code, "%q", args)
		assert.Equal(t, wantOut, out, "%q", args)
		assert.Equal(t, wantErr, errOut, "%q", args)
		assert.Equal(t, wantLog, log, "%q", args)
		require.NotContains(t, errOut, "panic", "%q", args)
	}
}
