package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/harness/claude"
	"github.com/git-venom/git-venom/lib/harness/codex"
)

// hookFixtures are the payloads recorded from Claude Code, Codex and
// OpenCode's plugin.
var hookFixtures = filepath.Join("..", "..", "tests", "testdata", "hooks")

// FuzzPayload feeds any bytes to the hook's stdin parser and Codex's notify
// parser. Whatever they accept must be a payload the hook can act on, and
// must read back the same from its own JSON; a harness without a notify
// program accepts no more than Codex's hook does.
func FuzzPayload(f *testing.F) {
	for _, dir := range []string{"claude/hooks", "codex/hooks", "opencode/hooks"} {
		files, _ := filepath.Glob(filepath.Join(hookFixtures, dir, "*.json"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"type":"agent-turn-complete","thread-id":"t","turn-id":"u","cwd":"/x"}`))
	f.Add([]byte(`{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":{"command":["apply_patch","*** Begin Patch\n*** Add File: a\n*** Move to: b\n*** End Patch"]}}`))
	f.Add([]byte(`{"hook_event_name":"Stop","transcript_path":"/dev/stdin","tool_input":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadHook(bytes.NewReader(data), &codex.Kind)
		q, qerr := ParseHook(data, &codex.Kind)
		require.Equal(t, qerr == nil, err == nil, "ReadHook and ParseHook disagree below the cap")
		if err == nil {
			require.Equal(t, q, p)
			checkPayload(t, p)
			// Its own JSON reads back the same.
			out, err := json.Marshal(p)
			require.NoError(t, err)
			again, err := ParseHook(out, nil)
			require.NoError(t, err, "%s", out)
			sameJSON(t, p, again)
		}
		if c, err := ParseHook(data, &claude.Kind); err == nil {
			require.NoError(t, qerr, "Claude Code's hook accepts what Codex's refuses")
			require.NotEqual(t, TurnComplete, c.Event, "a notify payload read on Claude Code's stdin")
		}
		if n, err := ParseNotify(string(data), &codex.Kind); err == nil {
			checkPayload(t, n)
			var ids struct {
				ThreadID string `json:"thread-id"`
				TurnID   string `json:"turn-id"`
			}
			require.NoError(t, json.Unmarshal(data, &ids))
			assert.Equal(t, TurnComplete, n.Event)
			assert.Equal(t, ids.ThreadID, n.SessionID)
			assert.Equal(t, ids.TurnID, n.TurnID)
			assert.Equal(t, n.TurnID, n.TurnKey())
		}
	})
}

// checkPayload asserts what the hook relies on in a parsed payload.
func checkPayload(t *testing.T, p *Payload) {
	require.NotEmpty(t, p.Event, "a payload without an event was accepted")
	if p.TurnID != "" {
		assert.Equal(t, p.TurnID, p.TurnKey())
	} else {
		assert.Equal(t, p.PromptID, p.TurnKey())
	}
	_ = Known(p.Event)
	seen := map[string]bool{}
	for _, path := range EditedPaths(p.ToolName, p.ToolInput) {
		assert.NotEmpty(t, path)
		assert.False(t, seen[path], "%q named twice", path)
		seen[path] = true
	}
}

// sameJSON compares two payloads with tool_input by its JSON value:
// encoding/json compacts a raw member it writes and escapes <, > and &;
// null and absent are the same.
func sameJSON(t *testing.T, a, b *Payload) {
	x, y := *a, *b
	x.ToolInput, y.ToolInput = nil, nil
	assert.Equal(t, x, y)
	assert.Equal(t, jsonValue(t, a.ToolInput), jsonValue(t, b.ToolInput))
}

func jsonValue(t *testing.T, raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

// endless is a stdin that never ends, counting what was read of it.
type endless struct{ read int64 }

func (e *endless) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = ' '
	}
	e.read += int64(len(b))
	return len(b), nil
}

func TestReadHook_StopsAtTheCap(t *testing.T) {
	in := &endless{}
	_, err := ReadHook(in, nil)
	require.ErrorContains(t, err, "over 16777216 bytes")
	assert.Equal(t, int64(MaxPayloadBytes+1), in.read, "read past the cap")

	// At the cap exactly, a payload still parses.
	pad := bytes.Repeat([]byte(" "), MaxPayloadBytes-len(`{"hook_event_name":"Stop"}`))
	p, err := ReadHook(io.MultiReader(bytes.NewReader([]byte(`{"hook_event_name":"Stop"}`)), bytes.NewReader(pad)), nil)
	require.NoError(t, err)
	assert.Equal(t, Stop, p.Event)
}

// Codex's notify payload reads as a turn's end, as the argument of
// Codex's hook or on its stdin; Claude Code's hook has no notify program
// and refuses it either way.
func TestParseNotify_CodexOnly(t *testing.T) {
	arg := `{"type":"agent-turn-complete","thread-id":"th1","turn-id":"tu1","cwd":"/r","input-messages":["x"]}`
	for name, parse := range map[string]func() (*Payload, error){
		"argument": func() (*Payload, error) { return ParseNotify(arg, &codex.Kind) },
		"stdin":    func() (*Payload, error) { return ReadHook(strings.NewReader(arg), &codex.Kind) },
	} {
		p, err := parse()
		require.NoError(t, err, name)
		assert.Equal(t, Payload{Event: TurnComplete, SessionID: "th1", TurnID: "tu1", Cwd: "/r"}, *p, name)
	}
	_, err := ParseNotify(arg, &claude.Kind)
	assert.ErrorContains(t, err, "Claude Code's hook reads its payload on stdin")
	_, err = ReadHook(strings.NewReader(arg), &claude.Kind)
	assert.ErrorContains(t, err, "no hook_event_name")

	for in, want := range map[string]string{
		`{"type":"agent-turn-complete","thread-id":"th1"}`:   "lacks thread-id or turn-id",
		`{"type":"other","thread-id":"th1","turn-id":"tu1"}`: `the notify type "other" is not agent-turn-complete`,
		`{"type":`: "the notify argument is not JSON",
	} {
		_, err := ParseNotify(in, &codex.Kind)
		assert.ErrorContains(t, err, want, in)
	}
	// On stdin, JSON of another type is a hook payload without an event.
	_, err = ReadHook(strings.NewReader(`{"type":"other"}`), &codex.Kind)
	assert.ErrorContains(t, err, "no hook_event_name")
	_, err = ReadHook(strings.NewReader(`{"type":"agent-turn-complete"}`), &codex.Kind)
	assert.ErrorContains(t, err, "lacks thread-id or turn-id")
}
