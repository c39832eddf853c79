package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The real Codex CLI, driven offline against mockResponses, a scripted
// OpenAI Responses API on 127.0.0.1. tests/harnesses/install
// puts the pinned npm package under tests/.harness/codex; tests/run exports
// VENOM_TEST_REAL_CODEX, its static binary.

// mockReply is the model's answer to one request: output items, or an
// HTTP failure.
type mockReply struct {
	Fail  int // an HTTP status: the call fails (Codex retries nothing, config.toml)
	Items []map[string]any
	// Gate, when set, holds the answer until it is closed (at most a
	// minute): a turn kept running while another session works.
	Gate <-chan struct{}
}

// Items the model returns.
func say(text string) map[string]any {
	return map[string]any{"type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// patchCall is an apply_patch call (a custom tool with freeform input in
// Codex 0.171.0).
func patchCall(patch string) map[string]any {
	return map[string]any{"type": "custom_tool_call", "name": "apply_patch", "input": patch}
}

// execCall runs a shell command through the exec_command function.
func execCall(cmd string) map[string]any {
	args, _ := json.Marshal(map[string]any{"cmd": cmd})
	return map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args)}
}

// mockResponses answers POST /v1/responses from a script, one reply a
// request in order, and records every request's body.
type mockResponses struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	script []mockReply
	bodies []map[string]any
	extra  int // requests beyond the script (answered with a final message)
}

// newMockResponses starts the server on 127.0.0.1 (httptest's loopback
// listener); it stops when the test ends.
func newMockResponses(t *testing.T) *mockResponses {
	m := &mockResponses{t: t}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// Then appends replies to the script: a turn is its tool calls' replies,
// then the final text.
func (m *mockResponses) Then(r ...mockReply) *mockResponses {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = append(m.script, r...)
	return m
}

// Turn scripts one turn: each item a reply of its own, then text.
func (m *mockResponses) Turn(text string, calls ...map[string]any) *mockResponses {
	for _, c := range calls {
		m.Then(mockReply{Items: []map[string]any{c}})
	}
	return m.Then(mockReply{Items: []map[string]any{say(text)}})
}

// Requests returns the recorded request bodies.
func (m *mockResponses) Requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any{}, m.bodies...)
}

// Left is how many scripted replies were not asked for.
func (m *mockResponses) Left() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.script)
}

func (m *mockResponses) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	_ = json.Unmarshal(b, &body)
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	n := len(m.bodies)
	var reply mockReply
	if len(m.script) > 0 {
		reply, m.script = m.script[0], m.script[1:]
	} else {
		m.extra++
		reply = mockReply{Items: []map[string]any{say("nothing more is scripted")}}
	}
	m.mu.Unlock()
	if reply.Gate != nil {
		select {
		case <-reply.Gate:
		case <-time.After(time.Minute):
		}
	}
	if reply.Fail != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Fail)
		fmt.Fprintf(w, `{"error":{"message":"mock: scripted failure","type":"invalid_request_error","code":"mock_failure"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	id := fmt.Sprintf("resp_%d", n)
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		d, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, d)
		if fl != nil {
			fl.Flush()
		}
	}
	event("response.created", map[string]any{"response": map[string]any{"id": id}})
	event("response.in_progress", map[string]any{"response": map[string]any{"id": id}})
	for i, it := range reply.Items {
		item := map[string]any{}
		for k, v := range it {
			item[k] = v
		}
		item["id"] = fmt.Sprintf("item_%d_%d", n, i)
		if item["type"] != "message" {
			item["call_id"] = fmt.Sprintf("call_%d_%d", n, i)
		}
		item["status"] = "completed"
		event("response.output_item.added", map[string]any{"output_index": i, "item": item})
		event("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event("response.completed", map[string]any{"response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
}

// realCodex is one test's Codex: a scratch CODEX_HOME whose config.toml
// points at the mock and turns plugins off (each codex app-server start,
// install's and uninstall's, else syncs OpenAI's curated plugin
// repository: a git ls-remote to github.com), and the binary's folder
// first on PATH so that git-venom's adapter runs the same program.
type realCodex struct {
	e    *Env
	Bin  string
	Home string // CODEX_HOME
	Mock *mockResponses
}

func (e *Env) UseRealCodex(t *testing.T) *realCodex {
	t.Helper()
	bin := realProgram(t, "VENOM_TEST_REAL_CODEX", "codex", "node_modules", "@openai", "codex-linux-x64",
		"vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	m := newMockResponses(t)
	home := filepath.Join(e.Home, ".codex")
	require.NoError(t, os.MkdirAll(home, 0o755))
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[features]
plugins = false
# No login shell a run to snapshot the environment (nine processes):
# the scratch home has no profile to snapshot.
shell_snapshot = false

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false
`, m.srv.URL)
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644))
	// Codex asks `lsb_release -a` the OS's name three times a run (for
	// its user agent), a shell script of seven processes each; a failing
	// lsb_release ahead of git's folder (/usr/bin, lsb_release's too)
	// sends it to /etc/os-release instead.
	osName := filepath.Join(e.Root, "codex-path")
	require.NoError(t, os.MkdirAll(osName, 0o755))
	require.NoError(t, os.Symlink("/bin/false", filepath.Join(osName, "lsb_release")))
	e.Extra = append(e.Extra, "PATH="+filepath.Dir(bin)+":"+osName+":"+binDir+":"+gitDir+":/usr/local/bin:/usr/bin:/bin",
		"CODEX_HOME="+home, "MOCK_API_KEY=mock", "VENOM_CALLER=person")
	return &realCodex{e: e, Bin: bin, Home: home, Mock: m}
}

// codexRun is one `codex exec`: its JSON events and the thread it ran.
type codexRun struct {
	Thread string
	Events []map[string]any
	Stderr string
	Code   int
}

// Exec runs `codex exec --json [args] prompt` in dir (the repository when
// ""), bounded by a minute, and returns its events.
func (c *realCodex) Exec(dir string, args ...string) codexRun {
	c.e.t.Helper()
	if dir == "" {
		dir = c.e.Dir
	}
	argv := append([]string{"exec", "--json", "--skip-git-repo-check"}, args...)
	cmd := exec.Command(c.Bin, argv...)
	cmd.Dir = dir
	cmd.Env = c.e.Environ()
	cmd.Stdin = strings.NewReader("")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(c.e.t, err)
	require.NoError(c.e.t, cmd.Start())
	timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	var run codexRun
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		run.Events = append(run.Events, ev)
		if ev["type"] == "thread.started" {
			run.Thread, _ = ev["thread_id"].(string)
		}
	}
	err = cmd.Wait()
	run.Stderr = stderr.String()
	if ee, ok := err.(*exec.ExitError); ok {
		run.Code = ee.ExitCode()
	} else if err != nil {
		run.Code = -1
	}
	return run
}

// OK fails the test unless codex exec succeeded.
func (r codexRun) OK(t *testing.T) codexRun {
	t.Helper()
	require.Equal(t, 0, r.Code, "codex exec failed: %s\nevents: %v", r.Stderr, r.Events)
	require.NotEmpty(t, r.Thread, "codex exec printed no thread id")
	return r
}

// addFile is an apply_patch body that adds a file.
func addFile(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range strings.SplitAfter(content, "\n") {
		if l != "" {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}
