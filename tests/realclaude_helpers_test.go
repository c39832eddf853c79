package tests

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The real Claude Code program (tests/harnesses/install claude puts it in
// place; tests/run calls that) driven against a mock of the Anthropic
// Messages API on 127.0.0.1, offline.

// mockStep is one model response of a scripted turn: tool calls, a final
// text, or a failed call (HTTP 400, which Claude Code does not retry and
// ends the turn with StopFailure).
type mockStep struct {
	Tools []mockTool
	Text  string
	Fail  bool
	// Gate, when set, holds the answer until it is closed (at most a
	// minute): a turn kept running while another session works.
	Gate <-chan struct{}
}

type mockTool struct {
	Name  string
	Input map[string]any
}

// Write, Edit and Bash are the tool calls of a script.
func Write(path, content string) mockTool {
	return mockTool{"Write", map[string]any{"file_path": path, "content": content}}
}

func Edit(path, old, new string) mockTool {
	return mockTool{"Edit", map[string]any{"file_path": path, "old_string": old, "new_string": new}}
}

func Bash(command string) mockTool {
	return mockTool{"Bash", map[string]any{"command": command, "description": "run"}}
}

// MockRequest is one recorded POST /v1/messages.
type MockRequest struct {
	Tools    bool // the main loop's call (side calls carry no tools)
	Messages []mockMessage
	Raw      []byte
}

type mockMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Texts is every text of the message (string content, text blocks and
// tool results' text), in order.
func (m mockMessage) Texts() []string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []string{s}
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(m.Content, &blocks)
	var out []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, b.Text)
		case "tool_result":
			var c string
			if json.Unmarshal(b.Content, &c) == nil {
				out = append(out, c)
			} else {
				out = append(out, string(b.Content))
			}
		}
	}
	return out
}

// prompt is the person's text in a user message: its string content or
// text blocks, without Claude Code's system reminders and tool results.
// Claude Code merges a prompt into the tool results before it when the
// turn between failed, so a message may hold both.
func (m mockMessage) prompt() string {
	if m.Role != "user" {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

// MockModel is the Messages API double. A turn's script is chosen by a
// key its prompt contains; the step is the number of assistant messages
// since that prompt, so concurrent sessions each follow their own script.
type MockModel struct {
	t       *testing.T
	URL     string
	mu      sync.Mutex
	scripts map[string][]mockStep
	reqs    []MockRequest
}

// NewMockModel starts the server on 127.0.0.1; it stops with the test.
func NewMockModel(t *testing.T) *MockModel {
	m := &MockModel{t: t, scripts: map[string][]mockStep{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	m.URL = "http://" + ln.Addr().String()
	return m
}

// Script sets the turn whose prompt contains key.
func (m *MockModel) Script(key string, steps ...mockStep) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.scripts[key] = steps
}

// Requests returns the main-loop requests recorded so far.
func (m *MockModel) Requests() []MockRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []MockRequest
	for _, r := range m.reqs {
		if r.Tools {
			out = append(out, r)
		}
	}
	return out
}

func (m *MockModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []mockMessage     `json:"messages"`
	}
	raw, err := readAllLimited(r, 64<<20)
	if err != nil || json.Unmarshal(raw, &body) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		writeJSON(w, map[string]any{"input_tokens": 10})
		return
	}
	req := MockRequest{Tools: len(body.Tools) > 0, Messages: body.Messages, Raw: raw}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	step := mockStep{Text: "ok"}
	if req.Tools {
		step = m.stepFor(body.Messages)
	}
	m.mu.Unlock()
	if step.Gate != nil {
		select {
		case <-step.Gate:
		case <-time.After(time.Minute):
		}
	}
	if step.Fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"mock: scripted failure"}}`))
		return
	}
	content := []map[string]any{}
	stop := "end_turn"
	if step.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": step.Text})
	}
	for i, tl := range step.Tools {
		content = append(content, map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%d_%d", len(m.reqs), i), "name": tl.Name, "input": tl.Input})
		stop = "tool_use"
	}
	msg := map[string]any{"id": fmt.Sprintf("msg_%d", len(m.reqs)), "type": "message", "role": "assistant",
		"model": "claude-mock", "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 5}}
	if !body.Stream {
		msg["content"] = content
		writeJSON(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	event := func(name string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", name, b)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, c := range content {
		if c["type"] == "text" {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		} else {
			in, _ := json.Marshal(c["input"])
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}})
	event("message_stop", map[string]any{"type": "message_stop"})
	_ = bw.Flush()
}

// stepFor picks the step of the script whose key the latest prompt holds.
// Without a script the model answers "ok".
func (m *MockModel) stepFor(msgs []mockMessage) mockStep {
	at, prompt := -1, ""
	for i := len(msgs) - 1; i >= 0 && at < 0; i-- {
		if prompt = msgs[i].prompt(); prompt != "" {
			at = i
		}
	}
	if at < 0 {
		return mockStep{Text: "ok"}
	}
	n := 0
	for _, msg := range msgs[at+1:] {
		if msg.Role == "assistant" {
			n++
		}
	}
	for key, steps := range m.scripts {
		if strings.Contains(prompt, key) {
			if n < len(steps) {
				return steps[n]
			}
			return mockStep{Text: "done"}
		}
	}
	return mockStep{Text: "ok"}
}

func readAllLimited(r *http.Request, limit int64) ([]byte, error) {
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("request over %d bytes", limit)
	}
	return b, err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// RealClaude runs the real program in an Env's repository.
type RealClaude struct {
	e     *Env
	bin   string
	Model *MockModel
}

// NewRealClaude installs git-venom's hooks with `hook install claude-code`
// and starts the mock model.
func NewRealClaude(t *testing.T, e *Env) *RealClaude {
	t.Helper()
	c := &RealClaude{e: e, bin: realProgram(t, "VENOM_TEST_REAL_CLAUDE", "claude", "node_modules", ".bin", "claude"), Model: NewMockModel(t)}
	e.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	return c
}

// Environ is the program's environment: the Env's, offline.
func (c *RealClaude) Environ(extra ...string) []string {
	env := append(c.e.Environ(),
		"ANTHROPIC_BASE_URL="+c.Model.URL,
		"ANTHROPIC_API_KEY=sk-mock",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"IS_SANDBOX=1", // bypassPermissions as root
	)
	env = append(env, jscFlags...)
	return append(env, extra...)
}

// jscFlags turn off JavaScriptCore's optimizing tiers (DFG and FTL) in
// the Bun executables, Claude Code and OpenCode, as v8Flags' --no-opt
// does in Node: runs of seconds, whose optimizing compiles in background
// threads cost more than they save. The TestReal tests alone: 145
// CPU-s instead of 155 (two runs each).
var jscFlags = []string{"BUN_JSC_useDFGJIT=0", "BUN_JSC_useFTLJIT=0"}

// ClaudeRun is one `claude -p` run's outcome.
type ClaudeRun struct {
	Code           int
	Stdout, Stderr string
}

// Command is an unstarted `claude -p prompt args...` in the repository.
func (c *RealClaude) Command(ctx context.Context, prompt string, args ...string) *exec.Cmd {
	argv := append([]string{"-p", prompt, "--output-format", "stream-json", "--verbose",
		"--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5"}, args...)
	cmd := exec.CommandContext(ctx, c.bin, argv...)
	cmd.Dir = c.e.Dir
	cmd.Env = c.Environ()
	return cmd
}

// Run runs one turn to its end (bounded at two minutes).
func (c *RealClaude) Run(prompt string, args ...string) ClaudeRun {
	c.e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.Command(ctx, prompt, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := ClaudeRun{Stdout: out.String(), Stderr: errb.String()}
	if err != nil {
		r.Code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		}
	}
	require.NoError(c.e.t, ctx.Err(), "claude %s timed out\n%s", prompt, r.Stderr)
	return r
}

// OK runs a turn that must succeed.
func (c *RealClaude) OK(prompt string, args ...string) ClaudeRun {
	c.e.t.Helper()
	r := c.Run(prompt, args...)
	if r.Code != 0 {
		c.e.t.Fatalf("claude -p %q %v: exit %d\nstdout: %s\nstderr: %s", prompt, args, r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// Transcript is the path of a session's transcript under the scratch HOME.
func (c *RealClaude) Transcript(session string) string {
	dir := filepath.Join(c.e.Home, ".claude", "projects")
	matches, _ := filepath.Glob(filepath.Join(dir, "*", session+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// newUUID is a fresh session id (version 4, as Claude Code's).
func newUUID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
