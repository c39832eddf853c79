package claude

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/harness/ojson"
)

// NewSessionID returns a random (version 4) UUID, as Claude Code's session
// ids are.
func NewSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// metaTypes are the lines forkSession carries into the copy, after the
// conversation, in this order (sdk.mjs _j).
var metaTypes = []string{"content-replacement", "atis-latch", "tools-used", "data-flow", "derived-from", "relocated"}

// Fork writes a new session holding the source's conversation through
// anchor, as the Agent SDK's forkSession does (sdk.mjs, 0.3.332), for
// `claude --resume newID`: the chain lines up to the anchor with new
// uuids, parents remapped and forkedFrom set, then the kept meta lines and
// a "(fork)" title. The source is only read; the path returned is beside it.
func Fork(src, anchor, newID string, now time.Time) (string, error) {
	if !ValidSessionID(newID) {
		return "", fmt.Errorf("not a session id: %s", newID)
	}
	srcID := strings.TrimSuffix(filepath.Base(src), ".jsonl")
	at, err := Resolve(src, anchor)
	if err != nil {
		return "", err
	}
	raws, err := readLines(src)
	if err != nil {
		return "", err
	}
	type entry struct {
		obj  *ojson.Object
		line Line
	}
	var chain []entry
	meta := map[string][]*ojson.Object{}
	title, aiTitle, firstPrompt := "", "", ""
	for _, raw := range raws {
		var l Line
		if json.Unmarshal(raw, &l) != nil {
			continue
		}
		obj, err := ojson.ParseObject(raw)
		if err != nil {
			continue
		}
		switch {
		case l.InChain():
			chain = append(chain, entry{obj, l})
			if firstPrompt == "" && l.isPrompt() {
				var m struct {
					Content string `json:"content"`
				}
				_ = json.Unmarshal(l.Message, &m)
				firstPrompt = m.Content
			}
		case l.Type == "custom-title":
			title = obj.String("customTitle")
		case l.Type == "ai-title":
			aiTitle = obj.String("aiTitle")
		case l.Type == "content-replacement":
			if l.SessionID == "" || l.SessionID == srcID {
				meta[l.Type] = append(meta[l.Type], obj)
			}
		default:
			for _, t := range metaTypes {
				if l.Type == t {
					meta[t] = []*ojson.Object{obj} // the last one wins
				}
			}
		}
	}
	cut := -1
	for i, e := range chain {
		if *e.line.UUID == at {
			cut = i
			break
		}
	}
	if cut < 0 {
		return "", errAnchor(anchor)
	}
	chain = chain[:cut+1]
	byUUID := map[string]*Line{}
	newUUID := map[string]string{}
	for i := range chain {
		byUUID[*chain[i].line.UUID] = &chain[i].line
		newUUID[*chain[i].line.UUID] = NewSessionID()
	}
	// parentOf is the nearest ancestor in the copy that is not a progress line.
	parentOf := func(p *string) any {
		for hops := 0; p != nil && hops < len(chain)+1; hops++ {
			l, ok := byUUID[*p]
			if !ok {
				return nil
			}
			if l.Type != "progress" {
				return newUUID[*p]
			}
			p = l.ParentUUID
		}
		return nil
	}
	stamp := now.UTC().Format("2006-01-02T15:04:05.000Z")
	var out []byte
	kept := 0
	for _, e := range chain {
		if e.line.Type != "progress" {
			kept++
		}
	}
	n := 0
	for _, e := range chain {
		if e.line.Type == "progress" {
			continue
		}
		n++
		o := e.obj.Clone()
		old := *e.line.UUID
		o.Set("uuid", newUUID[old])
		o.Set("parentUuid", parentOf(e.line.ParentUUID))
		if v, ok := o.Get("logicalParentUuid"); ok {
			var mapped any
			if s, ok := v.(string); ok {
				if u, ok := newUUID[s]; ok {
					mapped = u
				}
			}
			o.Set("logicalParentUuid", mapped)
		}
		o.Set("sessionId", newID)
		if n == kept {
			o.Set("timestamp", stamp)
		}
		o.Set("isSidechain", false)
		if e.line.Type == "assistant" {
			rs := o.String("requestSessionId")
			if rs == "" && e.line.ForkedFrom != nil {
				rs = e.line.ForkedFrom.SessionID
			}
			if rs == "" {
				rs = e.line.SessionID
			}
			o.Set("requestSessionId", rs)
		}
		ff := ojson.NewObject()
		ff.Set("sessionId", srcID)
		ff.Set("messageUuid", old)
		o.Set("forkedFrom", ff)
		out = append(append(out, ojson.Compact(o)...), '\n')
	}
	for _, t := range metaTypes {
		for _, m := range meta[t] {
			o := ojson.NewObject()
			o.Set("type", t)
			o.Set("sessionId", newID)
			for _, k := range m.Keys() {
				if k != "type" && k != "sessionId" {
					v, _ := m.Get(k)
					o.Set(k, v)
				}
			}
			out = append(append(out, ojson.Compact(o)...), '\n')
		}
	}
	if title == "" {
		title = aiTitle
	}
	if title == "" {
		title = firstPrompt
	}
	if title == "" {
		title = "Forked session"
	}
	t := ojson.NewObject()
	t.Set("type", "custom-title")
	t.Set("sessionId", newID)
	t.Set("customTitle", title+" (fork)")
	t.Set("uuid", NewSessionID())
	t.Set("timestamp", stamp)
	out = append(append(out, ojson.Compact(t)...), '\n')

	dst := filepath.Join(filepath.Dir(src), newID+".jsonl")
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(out); err != nil {
		f.Close()
		os.Remove(dst)
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(dst)
		return "", err
	}
	return dst, f.Close()
}
