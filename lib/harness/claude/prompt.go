package claude

import (
	"encoding/json"
	"sync"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/testhook"
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
	ix := promptsOf(path, a, t)
	if p, ok := ix.byPromptID[t.HarnessTurn]; ok && t.HarnessTurn != "" {
		return p
	}
	if t.HarnessEnd != "" {
		return ix.beforeEntry[t.HarnessEnd]
	}
	return ""
}

// prompts is one transcript's prompts, by prompt id and by the uuid of
// each chain entry that follows one: only those the agent's turns name
// (their harness turns and ends), so that what it holds is bounded by
// the turns, not by the transcript's lines.
type prompts struct {
	byPromptID  map[string]string
	beforeEntry map[string]string
	ids, ends   map[string]bool // what was looked for
}

// A command explaining many turns of one session reads its transcript
// once, per agent.
var (
	promptsMu    sync.Mutex
	promptsCache = map[[2]string]*prompts{}
)

func promptsOf(path string, a *agents.Agent, t *agents.Turn) *prompts {
	promptsMu.Lock()
	defer promptsMu.Unlock()
	key := [2]string{path, a.ID}
	if ix, ok := promptsCache[key]; ok && ix.ids[t.HarnessTurn] && ix.ends[t.HarnessEnd] {
		return ix
	}
	ids, ends := map[string]bool{t.HarnessTurn: true}, map[string]bool{t.HarnessEnd: true}
	for _, o := range a.Turns {
		ids[o.HarnessTurn], ends[o.HarnessEnd] = true, true
	}
	ix := &prompts{byPromptID: map[string]string{}, beforeEntry: map[string]string{}, ids: ids, ends: ends}
	promptsCache[key] = ix
	last, decoded := "", 0
	_ = eachLine(path, func(raw []byte) bool {
		if !mayChain(raw) {
			return true
		}
		decoded++
		var l Line // after the look: it escapes, an allocation a line
		if json.Unmarshal(raw, &l) != nil {
			return true
		}
		if text, ok := promptText(raw, &l); ok {
			last = text
			if _, seen := ix.byPromptID[l.PromptID]; !seen && ids[l.PromptID] {
				ix.byPromptID[l.PromptID] = text
			}
		}
		if l.InChain() && last != "" && ends[*l.UUID] {
			ix.beforeEntry[*l.UUID] = last
		}
		return true
	})
	testhook.Counted("transcript-lines-decoded", decoded)
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
