// Command codexdouble stands in for `codex` in tests: `codex app-server`
// speaks Codex 0.171.0's JSON-RPC as recorded in
// tests/testdata/hooks/codex/app-server, over threads kept in
// $CODEX_HOME/double.json, each request logged to $CODEX_HOME/double.log.
// `codex --version` prints "codex-cli 0.171.0"; CODEX_DOUBLE_HANG=1 never
// answers thread/fork, CODEX_DOUBLE_REFUSE=msg answers it with error msg.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

type state struct {
	Threads map[string][]string `json:"threads"`
}

var home = os.Getenv("CODEX_HOME")

func load() *state {
	s := &state{Threads: map[string][]string{}}
	if b, err := os.ReadFile(filepath.Join(home, "double.json")); err == nil {
		_ = json.Unmarshal(b, s)
	}
	return s
}

func (s *state) save() {
	b, _ := json.MarshalIndent(s, "", "  ")
	_ = os.WriteFile(filepath.Join(home, "double.json"), b, 0o644)
}

var out = bufio.NewWriter(os.Stdout)

func send(v any) {
	b, _ := json.Marshal(v)
	out.Write(append(b, '\n'))
	out.Flush()
}

func fail(id json.RawMessage, msg string) {
	send(map[string]any{"id": id, "error": map[string]any{"code": -32600, "message": msg}})
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("codex-cli 0.171.0")
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "app-server" {
		fmt.Fprintln(os.Stderr, "codexdouble: only app-server and --version")
		os.Exit(2)
	}
	logf, _ := os.OpenFile(filepath.Join(home, "double.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64<<10), 16<<20)
	initialized := false
	for in.Scan() {
		if logf != nil {
			logf.Write(append(append([]byte{}, in.Bytes()...), '\n'))
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params map[string]any  `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		if len(m.ID) == 0 {
			continue // a notification: initialized
		}
		if m.Method != "initialize" && !initialized {
			fail(m.ID, "Not initialized")
			continue
		}
		switch m.Method {
		case "initialize":
			if initialized {
				fail(m.ID, "Already initialized")
				continue
			}
			initialized = true
			send(map[string]any{"id": m.ID, "result": map[string]any{"userAgent": "git-venom/0.171.0 (double)",
				"codexHome": home, "platformFamily": "unix", "platformOs": "linux"}})
			send(map[string]any{"method": "remoteControl/status/changed", "params": map[string]any{"status": "disabled"},
				"emittedAtMs": time.Now().UnixMilli()})
		case "thread/fork":
			fork(m.ID, m.Params)
		case "thread/unsubscribe":
			send(map[string]any{"id": m.ID, "result": map[string]any{"status": "unsubscribed"}})
		default:
			fail(m.ID, "Invalid request: unknown variant `"+m.Method+"`")
		}
	}
}

func fork(id json.RawMessage, p map[string]any) {
	if os.Getenv("CODEX_DOUBLE_HANG") != "" {
		return
	}
	// A request of the server's own comes first, as approvals may.
	send(map[string]any{"id": 900, "method": "item/tool/requestUserInput", "params": map[string]any{}})
	if msg := os.Getenv("CODEX_DOUBLE_REFUSE"); msg != "" {
		fail(id, msg)
		return
	}
	thread, _ := p["threadId"].(string)
	last, _ := p["lastTurnId"].(string)
	if !uuidRE.MatchString(thread) {
		fail(id, "invalid session id: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `"+thread[:min(1, len(thread))]+"` at 1")
		return
	}
	s := load()
	turns, ok := s.Threads[thread]
	if !ok {
		fail(id, "no rollout found for thread id "+thread)
		return
	}
	keep := -1
	for i, t := range turns {
		if t == last {
			keep = i
		}
	}
	if last != "" && keep < 0 {
		fail(id, "turn not found: "+last)
		return
	}
	nid := newID()
	s.Threads[nid] = append([]string{}, turns[:keep+1]...)
	s.save()
	th := map[string]any{"id": nid, "sessionId": nid, "forkedFromId": thread, "historyMode": "paginated",
		"status": map[string]any{"type": "idle"}, "turns": []any{}}
	send(map[string]any{"method": "warning", "params": map[string]any{"threadId": nid, "message": "a notification first"}})
	send(map[string]any{"id": id, "result": map[string]any{"thread": th, "model": "gpt-5.5", "cwd": "."}})
	send(map[string]any{"method": "thread/started", "params": map[string]any{"thread": th}})
}
