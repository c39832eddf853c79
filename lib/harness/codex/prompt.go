package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/statefile"
)

// maxRollout bounds a rollout read whole for its prompts.
const maxRollout = 256 << 20

// Prompt reads the prompt that opened turn t from its thread's rollouts
// under $CODEX_HOME/sessions: the user message Codex recorded for the
// turn id (Codex 0.171.0: an item_completed UserMessage; older ones: a
// user_message event inside the turn). "" when no rollout holds it.
func (Adapter) Prompt(a *agents.Agent, t *agents.Turn, getenv func(string) string) string {
	thread := t.Session
	if thread == "" {
		thread = a.Binding.Session
	}
	if thread == "" || t.HarnessTurn == "" || strings.ContainsAny(thread, "/*?[\\") {
		return ""
	}
	home := getenv("CODEX_HOME")
	if home == "" {
		if h := getenv("HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		}
	}
	if home == "" {
		return ""
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	for _, f := range files {
		if p, ok := rolloutPrompts(f)[t.HarnessTurn]; ok {
			return p
		}
	}
	return ""
}

var (
	rolloutMu    sync.Mutex
	rolloutCache = map[string]map[string]string{}
)

// rolloutPrompts maps each turn id of a rollout to its first user message,
// reading the file once a process.
func rolloutPrompts(path string) map[string]string {
	rolloutMu.Lock()
	defer rolloutMu.Unlock()
	if m, ok := rolloutCache[path]; ok {
		return m
	}
	m := map[string]string{}
	rolloutCache[path] = m
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return m
	}
	defer f.Close()
	current := ""
	_ = eachLine(io.LimitReader(f, maxRollout), maxLine, func(line []byte) {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type    string `json:"type"`
				TurnID  string `json:"turn_id"`
				Message string `json:"message"`
				Item    struct {
					Type    string `json:"type"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"item"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil {
			return
		}
		p := &l.Payload
		if l.Type == "turn_context" || (l.Type == "event_msg" && p.Type == "task_started") {
			current = p.TurnID
			return
		}
		if l.Type != "event_msg" {
			return
		}
		switch {
		case p.Type == "item_completed" && p.Item.Type == "UserMessage" && p.TurnID != "" && len(p.Item.Content) > 0:
			if _, ok := m[p.TurnID]; !ok {
				m[p.TurnID] = p.Item.Content[0].Text
			}
		case p.Type == "user_message" && current != "":
			if _, ok := m[current]; !ok {
				m[current] = p.Message
			}
		}
	})
	return m
}

// maxLine is the longest rollout line decoded for prompts. Codex writes a
// tool's whole output, or an image, on one line; a longer line holds no
// prompt worth its memory, and is passed over.
const maxLine = 16 << 20

// eachLine calls fn with each non-empty line of r, without its newline, passing
// over any line longer than max bytes instead of ending there (as a
// bufio.Scanner does at its cap): the lines after it are still read. The
// slice fn gets is reused for the next line.
func eachLine(r io.Reader, max int, fn func([]byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if n := len(line) + len(bytes.TrimSuffix(chunk, []byte("\n"))); !over && n > max {
			over, line = true, line[:0]
		}
		if !over {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue // the same line goes on
		}
		if l := bytes.TrimSuffix(line, []byte("\n")); !over && len(l) > 0 {
			fn(l)
		}
		line, over = line[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
