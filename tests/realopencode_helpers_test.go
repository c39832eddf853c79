package tests

import (
	"context"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real OpenCode, driven offline against mockChat, a scripted OpenAI
// chat-completions API on 127.0.0.1 that OpenCode's bundled
// @ai-sdk/openai-compatible provider speaks.
// tests/harnesses/install puts the pinned npm package under
// tests/.harness/opencode; tests/run exports VENOM_TEST_REAL_OPENCODE.

// chatStep is one model answer: tool calls, a text, a failed call (HTTP
// 400, which OpenCode does not retry), or an answer held until Gate closes.
type chatStep struct {
	Tool string
	Args map[string]any
	Text string
	Fail bool
	Gate chan struct{}
}

// mockChat answers /v1/chat/completions by script: the steps of the
// prompt the request's last user message holds, the nth step for the nth
// answer after it, so that concurrent sessions never take each other's.
// Requests without tools (OpenCode's session title) get a title.
type mockChat struct {
	srv    *httptest.Server
	mu     sync.Mutex
	script map[string][]chatStep
	bodies []map[string]any
}

func newMockChat(t *testing.T) *mockChat {
	m := &mockChat{script: map[string][]chatStep{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// Script sets the steps of the prompt that contains key.
func (m *mockChat) Script(key string, steps ...chatStep) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script[key] = steps
}

// Requests returns the recorded bodies of the main-loop requests.
func (m *mockChat) Requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any{}, m.bodies...)
}

// promptKey is the scripted key a user message is the prompt of: of the
// keys it contains, the one that occurs last, since the prompt comes after
// whatever context the program puts before it. Qwen Code's context lists
// the tree's files, so a second session's "beta" message also holds
// "alpha.txt"; picking any key it contains answered it from alpha's script
// at random (map order), which hung the test or wrote the wrong file.
func promptKey(script map[string][]chatStep, text string) string {
	best, at := "", -1
	for key := range script {
		i := strings.LastIndex(text, key)
		if i > at || i == at && i >= 0 && len(key) > len(best) {
			best, at = key, i
		}
	}
	return best
}

// chatText is a request message's text, whatever its content's shape.
func chatText(msg map[string]any) string {
	switch c := msg["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				s, _ := pm["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// UserTexts lists the user messages of a request body.
func UserTexts(body map[string]any) []string {
	var out []string
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "user" {
			out = append(out, chatText(mm))
		}
	}
	return out
}

func (m *mockChat) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var body map[string]any
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") || json.Unmarshal(b, &body) != nil {
		http.NotFound(w, r)
		return
	}
	step := chatStep{Text: "title"}
	if tools, _ := body["tools"].([]any); len(tools) > 0 {
		msgs, _ := body["messages"].([]any)
		last, answers := "", 0
		for _, x := range msgs {
			mm, _ := x.(map[string]any)
			switch mm["role"] {
			case "user":
				last, answers = chatText(mm), 0
			case "assistant":
				answers++
			}
		}
		m.mu.Lock()
		m.bodies = append(m.bodies, body)
		step = chatStep{Text: "nothing more is scripted"}
		if steps := m.script[promptKey(m.script, last)]; answers < len(steps) {
			step = steps[answers]
		}
		m.mu.Unlock()
	}
	if step.Gate != nil {
		select {
		case <-step.Gate:
		case <-r.Context().Done():
			return
		}
	}
	if step.Fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"the mock fails this call","type":"invalid_request_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		d, _ := json.Marshal(map[string]any{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1,
			"model": "mock", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", d)
	}
	if step.Tool != "" {
		args, _ := json.Marshal(step.Args)
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0,
			"id": fmt.Sprintf("call_%d", time.Now().UnixNano()), "type": "function",
			"function": map[string]any{"name": step.Tool, "arguments": string(args)}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": step.Text}, nil)
		chunk(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// realOpenCode is one test's OpenCode: a config file outside the
// repository (OPENCODE_CONFIG) naming the mock as its only provider, edits
// and shell commands allowed, nothing that reaches out; the program's
// folder first on PATH, where a rollback's rewind finds it.
type realOpenCode struct {
	e    *Env
	Bin  string
	Chat *mockChat
}

func (e *Env) UseRealOpenCode(t *testing.T) *realOpenCode {
	t.Helper()
	bin := realProgram(t, "VENOM_TEST_REAL_OPENCODE", "opencode", "node_modules", ".bin", "opencode")
	m := newMockChat(t)
	config := map[string]any{
		"model": "mock/m", "small_model": "mock/m", "share": "disabled", "autoupdate": false,
		// OpenCode's own undo snapshots (a git repository of its own, about
		// 24 git starts a run): the plugin and the rewind's fork read none.
		"snapshot":   false,
		"permission": map[string]any{"edit": "allow", "bash": "allow"},
		"provider": map[string]any{"mock": map[string]any{"npm": "@ai-sdk/openai-compatible",
			"options": map[string]any{"baseURL": m.srv.URL + "/v1", "apiKey": "mock"},
			"models":  map[string]any{"m": map[string]any{"name": "m", "tool_call": true}}}},
	}
	b, err := json.Marshal(config)
	require.NoError(t, err)
	seedOpenCodePlugins(t, filepath.Join(e.Home, ".config", "opencode"))
	path := filepath.Join(e.Root, "opencode.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	// An empty models.dev catalogue: without one OpenCode builds and
	// validates its bundled list of every provider's models, a third of a
	// run's CPU; the mock provider is wholly defined in the config above.
	models := filepath.Join(e.Root, "opencode-models.json")
	require.NoError(t, os.WriteFile(models, []byte("{}\n"), 0o644))
	var pathVar string
	for _, kv := range e.Environ() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	e.Extra = append(e.Extra, "OPENCODE_CONFIG="+path, "OPENCODE_MODELS_PATH="+models, "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
		// OpenCode npm-installs its plugin package into each config folder
		// it loads; offline that waited about 70 s a run for the network.
		// npm's offline mode fails it at once, and OpenCode goes on as before.
		"npm_config_offline=true",
		// Start-up work the plugin's events do not depend on: OpenCode's
		// built-in plugins, Claude Code's and external skills, its watcher.
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1", "OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER=1",
		"PATH="+filepath.Dir(bin)+":"+pathVar)
	e.Extra = append(e.Extra, jscFlags...)
	return &realOpenCode{e: e, Bin: bin, Chat: m}
}

// seedOpenCodePlugins writes into a config folder what OpenCode's own
// npm install of @opencode-ai/plugin leaves there, less the modules our
// plugin does not import: OpenCode skips the install when node_modules/
// exists and the lock names every dependency. The install
// costs 25 s a folder online and stalls 70 s offline.
func seedOpenCodePlugins(t *testing.T, dir string) {
	t.Helper()
	const dep = `{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}`
	files := map[string]string{
		".gitignore":        "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n",
		"package.json":      dep + "\n",
		"package-lock.json": `{"name":"opencode","lockfileVersion":3,"requires":true,"packages":{"":` + dep + "}}\n",
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
}

// Command is `opencode run prompt args...` in the repository, its
// .opencode/ seeded as seedOpenCodePlugins says when the plugin is there.
func (o *realOpenCode) Command(ctx context.Context, prompt string, args ...string) *exec.Cmd {
	if _, err := os.Stat(o.e.Path(".opencode/node_modules")); os.IsNotExist(err) {
		if _, err := os.Stat(o.e.Path(".opencode")); err == nil {
			seedOpenCodePlugins(o.e.t, o.e.Path(".opencode"))
		}
	}
	cmd := exec.CommandContext(ctx, o.Bin, append(append([]string{"run"}, args...), prompt)...)
	cmd.Dir = o.e.Dir
	cmd.Env = o.e.Environ()
	cmd.Stdin = strings.NewReader("")
	return cmd
}

// Run runs one prompt, bounded by three minutes, and returns its output
// and error.
func (o *realOpenCode) Run(prompt string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := o.Command(ctx, prompt, args...).CombinedOutput()
	return string(out), err
}

// OK is Run, failing the test unless it succeeded.
func (o *realOpenCode) OK(prompt string, args ...string) string {
	o.e.t.Helper()
	out, err := o.Run(prompt, args...)
	require.NoError(o.e.t, err, "opencode run %q: %s", prompt, out)
	return out
}

// chatProgram is a real harness program that talks to mockChat:
// realOpenCode, realQwen.
type chatProgram interface {
	Command(ctx context.Context, prompt string, args ...string) *exec.Cmd
	OK(prompt string, args ...string) string
}

// twoSessionsAreTwoAgents runs two prompts of p at once in e's tree, the
// first held open by the mock until the second has ended: two sessions
// are two agents, the running one under the harness's name (agent), the
// other under agent-<8 of its session id>, each with its edit and every
// turn ended. write is the model's step that writes a file.
func twoSessionsAreTwoAgents(t *testing.T, e *Env, p chatProgram, chat *mockChat, agent string,
	write func(path, content string) chatStep) {
	t.Helper()
	gate := make(chan struct{})
	chat.Script("alpha", write(e.Path("alpha.txt"), "a\n"), chatStep{Text: "alpha done", Gate: gate})
	chat.Script("beta", write(e.Path("beta.txt"), "b\n"), chatStep{Text: "beta done"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	alpha := p.Command(ctx, "alpha")
	require.NoError(t, alpha.Start())
	WaitFile(t, e.Path("alpha.txt"), 2*time.Minute)
	p.OK("beta")
	close(gate)
	require.NoError(t, alpha.Wait())

	byPath := map[string]string{}
	for _, r := range e.Records("edit.recorded") {
		byPath[r["paths"].([]any)[0].(string)] = r["agent"].(string)
	}
	require.Contains(t, byPath, "alpha.txt")
	require.Contains(t, byPath, "beta.txt")
	assert.Equal(t, agent, byPath["alpha.txt"], "the running session keeps the harness's name")
	assert.True(t, strings.HasPrefix(byPath["beta.txt"], agent+"-"), "the other live session is another agent: %v", byPath)
	started := map[string]int{}
	for _, r := range e.Records("turn.started") {
		started[r["agent"].(string)]++
	}
	for _, a := range []string{byPath["alpha.txt"], byPath["beta.txt"]} {
		assert.NotEmpty(t, endedTurns(e, a), "%s's turns end", a)
		assert.Len(t, endedTurns(e, a), started[a], "every turn of %s ended", a)
	}
}

// interruptMidTurn starts a prompt whose model writes h.txt and then
// holds its answer, waits until the write is on disk and its edit
// recorded (the second edit.recorded of the test), stops the program with
// stop, and waits for it: a turn that never reports its end.
func interruptMidTurn(t *testing.T, e *Env, p chatProgram, chat *mockChat, write func(path, content string) chatStep,
	stop func(*exec.Cmd)) {
	t.Helper()
	gate := make(chan struct{})
	defer close(gate)
	chat.Script("make h", write(e.Path("h.txt"), "H\n"), chatStep{Text: "never", Gate: gate})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := p.Command(ctx, "make h")
	require.NoError(t, cmd.Start())
	WaitFile(t, e.Path("h.txt"), 2*time.Minute)
	// The edit is recorded once the harness's tool hook has run.
	deadline := time.Now().Add(time.Minute)
	for len(e.Records("edit.recorded")) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	stop(cmd)
	_ = cmd.Wait()
}
