package tests

import (
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

// The real Gemini CLI, driven offline against mockGemini, a scripted Gemini
// API (generativelanguage v1beta) on 127.0.0.1: GOOGLE_GEMINI_BASE_URL
// points the CLI at it and GEMINI_API_KEY is any string. tests/harnesses/
// install puts the pinned npm package under tests/.harness/gemini; tests/run
// exports VENOM_TEST_REAL_GEMINI, its program.

// realProgram finds a real harness program the suite drives: $envVar
// (tests/run sets it), else where tests/harnesses/install puts it, rel
// beneath tests/.harness/<name>. Missing, the test fails under CI (the
// suite must never pass without the real program) and skips elsewhere.
func realProgram(t *testing.T, envVar, name string, rel ...string) string {
	t.Helper()
	bin := os.Getenv(envVar)
	if bin == "" {
		bin = filepath.Join(append([]string{repoRoot(), "tests", ".harness", name}, rel...)...)
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real %s is missing (%v): tests/run installs it with tests/harnesses/install %s", name, err, name)
		}
		t.Skipf("the real %s is missing (%v): run tests/harnesses/install %s", name, err, name)
	}
	return bin
}

// geminiPart is one part of the model's answer: a text, or a function call.
type geminiPart map[string]any

func geminiText(s string) geminiPart { return geminiPart{"text": s} }

func geminiCall(name string, args map[string]any) geminiPart {
	return geminiPart{"functionCall": map[string]any{"name": name, "args": args}}
}

// mockGemini answers streamGenerateContent from a script, one reply a
// request, and records every request's body.
type mockGemini struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	script [][]geminiPart
	bodies []string
}

func newMockGemini(t *testing.T) *mockGemini {
	m := &mockGemini{t: t}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// Turn scripts one turn: each call a reply of its own, then the text.
func (m *mockGemini) Turn(text string, calls ...geminiPart) *mockGemini {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range calls {
		m.script = append(m.script, []geminiPart{c})
	}
	m.script = append(m.script, []geminiPart{geminiText(text)})
	return m
}

// Requests returns the recorded streamGenerateContent bodies.
func (m *mockGemini) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.bodies...)
}

func (m *mockGemini) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	switch {
	case r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	case strings.HasSuffix(r.URL.Path, ":countTokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"totalTokens":10}`)
		return
	case !strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		// The CLI's side calls (a summary, a check) get an empty answer.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{}"}]},"finishReason":"STOP","index":0}]}`)
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, string(b))
	parts := []geminiPart{geminiText("nothing more is scripted")}
	if len(m.script) > 0 {
		parts, m.script = m.script[0], m.script[1:]
	}
	m.mu.Unlock()
	chunk, _ := json.Marshal(map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 5, "candidatesTokenCount": 5, "totalTokenCount": 10},
		"modelVersion":  "gemini-2.5-pro"})
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", chunk)
}

// realGemini is one test's Gemini CLI: a scratch home whose settings pick
// API-key auth and turn off what would reach out (updates, telemetry), the
// repository trusted, and the mock as the API.
type realGemini struct {
	e    *Env
	Bin  string
	Mock *mockGemini
}

func (e *Env) UseRealGemini(t *testing.T) *realGemini {
	t.Helper()
	bin := realProgram(t, "VENOM_TEST_REAL_GEMINI", "gemini", "node_modules", ".bin", "gemini")
	m := newMockGemini(t)
	dir := filepath.Join(e.Home, ".gemini")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},
"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"privacy":{"usageStatisticsEnabled":false},
"telemetry":{"enabled":false}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644))
	trusted, _ := json.Marshal(map[string]string{e.Dir: "TRUST_FOLDER"})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trustedFolders.json"), trusted, 0o644))
	e.Extra = append(e.Extra, "GEMINI_API_KEY=mock", "GOOGLE_GEMINI_BASE_URL="+m.srv.URL,
		"GEMINI_CLI_NO_RELAUNCH=true", v8Flags(t, e))
	return &realGemini{e: e, Bin: bin, Mock: m}
}

// Prompt runs `gemini -p prompt --yolo` in the repository, bounded by two
// minutes, and returns its output; it fails the test unless it succeeded.
func (g *realGemini) Prompt(prompt string) string {
	g.e.t.Helper()
	cmd := exec.Command(g.Bin, "-p", prompt, "--yolo", "-m", "gemini-2.5-pro")
	cmd.Dir = g.e.Dir
	cmd.Env = g.e.Environ()
	cmd.Stdin = strings.NewReader("")
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(g.e.t, cmd.Start())
	timer := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	require.NoError(g.e.t, err, "gemini -p %q: %s\n%s", prompt, out.String(), stderr.String())
	return out.String()
}
