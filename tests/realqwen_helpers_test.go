package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The real Qwen Code, driven offline against mockChat (the scripted
// OpenAI chat-completions API the OpenCode tests use) on 127.0.0.1:
// Qwen Code's openai auth reads OPENAI_BASE_URL, OPENAI_API_KEY and
// OPENAI_MODEL. tests/harnesses/install puts the pinned npm package under
// tests/.harness/qwen; tests/run exports VENOM_TEST_REAL_QWEN, its
// program.
type realQwen struct {
	e    *Env
	Bin  string
	Chat *mockChat
}

// UseRealQwen sets up the test's Qwen Code: a scratch home whose user
// settings pick the openai auth and turn off what would reach out
// (updates, usage statistics, telemetry) or asks the model on its own
// (memory extraction), and the mock as the API.
// Folder trust is left at its default (off), so the repository's
// .qwen/settings.json is read as a fresh install reads it.
func (e *Env) UseRealQwen(t *testing.T) *realQwen {
	t.Helper()
	bin := realProgram(t, "VENOM_TEST_REAL_QWEN", "qwen", "node_modules", ".bin", "qwen")
	m := newMockChat(t)
	q := &realQwen{e: e, Bin: bin, Chat: m}
	q.UserSettings(nil)
	e.Extra = append(e.Extra, "OPENAI_API_KEY=mock", "OPENAI_BASE_URL="+m.srv.URL+"/v1", "OPENAI_MODEL=mock",
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
		// The launcher's child starts the program a third time, to raise
		// node's heap limit, unless told not to (as Gemini CLI's tests
		// are): a third of each run's CPU.
		"QWEN_CODE_NO_RELAUNCH=true", v8Flags(t, e))
	return q
}

// v8Flags is the NODE_OPTIONS that sets V8's flags through a preload
// (NODE_OPTIONS refuses them); they hold for all compiled after it.
// --liftoff-only: the shell tool's tree-sitter-bash wasm, optimized in a
// background job that exit waits for, took 6 CPU-s a run and kept Qwen
// Code 20-60 s from exiting after its answer under load. --no-opt: no
// TurboFan in a run of seconds, 10-12% less CPU in these tests.
func v8Flags(t *testing.T, e *Env) string {
	t.Helper()
	preload := filepath.Join(e.Root, "v8-flags.cjs")
	require.NoError(t, os.WriteFile(preload, []byte(`require("v8").setFlagsFromString("--liftoff-only --no-opt");`+"\n"), 0o644))
	return "NODE_OPTIONS=--require=" + preload
}

// UserSettings writes the test's user settings, changed by edit if not nil.
func (q *realQwen) UserSettings(edit func(map[string]any)) {
	t := q.e.t
	t.Helper()
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		// No systemd-inhibit child started and killed around each request
		// and tool call.
		"general":   map[string]any{"enableAutoUpdate": false, "preventSystemSleep": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"model":     map[string]any{"name": "mock"},
		// No background agents sending requests of their own.
		"memory": map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false,
			"enableAutoSkill": false},
		// Only the tools the tests' model calls (agent, edit, write_file,
		// run_shell_command): Qwen Code checks each tool's schema with an
		// Ajv of its own, compiling JSON Schema's meta-schema each time,
		// loads each tool's module and probes ripgrep for the grep tool;
		// a tenth of a run's CPU.
		"tools": map[string]any{"useRipgrep": false, "disabled": []string{"read_file", "glob", "grep_search",
			"notebook_edit", "skill", "list_agents", "get_goal", "update_goal", "tool_search", "tool_call",
			"cron_create", "cron_delete", "cron_list", "enter_worktree", "exit_worktree", "loop_wakeup", "monitor",
			"read_mcp_resource", "record_artifact", "report_findings", "send_message", "task_stop", "web_fetch",
			"zoom_image"}},
	}
	if edit != nil {
		edit(settings)
	}
	b, err := json.Marshal(settings)
	require.NoError(t, err)
	dir := filepath.Join(q.e.Home, ".qwen")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o644))
}

// Command is `qwen -p prompt --yolo args...` in the repository, in a
// process group of its own, as a terminal starts it: qwen is a launcher
// that runs the program as its child (node --expose-gc cli.js), which a
// signal to the launcher alone leaves running. Interrupt signals the
// group, as Ctrl-C does; the context's end kills it.
func (q *realQwen) Command(ctx context.Context, prompt string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, q.Bin, append([]string{"-p", prompt, "--yolo"}, args...)...)
	cmd.Dir = q.e.Dir
	cmd.Env = q.e.Environ()
	cmd.Stdin = strings.NewReader("")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// waitExited waits until the process pid has exited, bounded by limit.
func waitExited(t *testing.T, pid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for syscall.Kill(pid, 0) == nil {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err != nil {
			return
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
			return // a zombie, not reaped yet: it runs no more
		}
		require.True(t, time.Now().Before(deadline), "process %d still runs after %v", pid, limit)
		time.Sleep(50 * time.Millisecond)
	}
}

// Interrupt sends SIGINT to the command's process group, as Ctrl-C on
// its terminal does.
func Interrupt(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
}

// Run runs one prompt, bounded by two minutes, and returns its output and
// error.
func (q *realQwen) Run(prompt string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := q.Command(ctx, prompt, args...).CombinedOutput()
	return string(out), err
}

// LastRequestFor is the last request whose latest user message holds key.
func (q *realQwen) LastRequestFor(key string) []string {
	q.e.t.Helper()
	reqs := q.Chat.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if users := UserTexts(reqs[i]); len(users) > 0 && strings.Contains(users[len(users)-1], key) {
			return users
		}
	}
	q.e.t.Fatalf("no request for %q", key)
	return nil
}

// OK is Run, failing the test unless it succeeded.
func (q *realQwen) OK(prompt string, args ...string) string {
	q.e.t.Helper()
	out, err := q.Run(prompt, args...)
	require.NoError(q.e.t, err, "qwen -p %q: %s", prompt, out)
	return out
}
