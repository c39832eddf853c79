package claude

import (
	"encoding/json"
	"sync"

	"github.com/git-venom/git-venom/lib/agents"
)

// Prompt reads the prompt that opened turn t from its session's
// transcript: the person's line whose promptId is the turn's harness id
// (Claude Code's prompt_id), else the last prompt before the turn's last
// entry (harness_end). "" when the transcript is gone or holds neither.
func (Adapter) Prompt(a *agents.Agent, t *agents.Turn, getenv func(string) string) string {
	session := t.Session
	if session == "" {
		session = a.Binding.Session
	}
	if session == "" {
		return ""
	}
	path, err := Locate(ConfigDir(getenv), a.Tree, session)
	if err != nil {
		return ""
	}
	ix := promptsOf(path)
	if p, ok := ix.byPromptID[t.HarnessTurn]; ok && t.HarnessTurn != "" {
		return p
	}
	if t.HarnessEnd != "" {
		return ix.beforeEntry[t.HarnessEnd]
	}
	return ""
}

// prompts is one transcript's prompts, by prompt id and by the uuid of
// each chain entry that follows one.
type prompts struct {
	byPromptID  map[string]string
	beforeEntry map[string]string
}

// A command explaining many turns of one session reads its transcript
// once.
var (
	promptsMu    sync.Mutex
	promptsCache = map[string]*prompts{}
)

func promptsOf(path string) *prompts {
	promptsMu.Lock()
	defer promptsMu.Unlock()
	if ix, ok := promptsCache[path]; ok {
		return ix
	}
	ix := &prompts{byPromptID: map[string]string{}, beforeEntry: map[string]string{}}
	promptsCache[path] = ix
	lines, err := readLines(path)
	if err != nil {
		return ix
	}
	last := ""
	for _, raw := range lines {
		var l Line
		if json.Unmarshal(raw, &l) != nil {
			continue
		}
		if text, ok := promptText(raw, &l); ok {
			last = text
			if _, seen := ix.byPromptID[l.PromptID]; !seen {
				ix.byPromptID[l.PromptID] = text
			}
		}
		if l.InChain() && last != "" {
			ix.beforeEntry[*l.UUID] = last
		}
	}
	return ix
}

// promptText is the person's text of a prompt line of the main chain;
// hook feedback (isMeta) is a user line too, but nobody typed it, and a
// subagent's prompt (a sidechain) is the agent's own.
func promptText(raw []byte, l *Line) (string, bool) {
	if !l.isPrompt() || l.IsSidechain {
		return "", false
	}
	var m struct {
		IsMeta  bool `json:"isMeta"`
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(raw, &m) != nil || m.IsMeta {
		return "", false
	}
	return m.Message.Content, true
}
