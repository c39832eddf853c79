package claude

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures come from Claude Code 2.1.332 and Agent SDK 0.3.332
// (tests/testdata/hooks/claude/README.md).
var fixtures = filepath.Join("..", "..", "..", "tests", "testdata", "hooks", "claude")

const (
	synthID   = "5e55a0b1-7c1d-4e2f-9a3b-0c4d5e6f7a80"
	turn1End  = "00000001-0000-4000-8000-000000000006"
	turn2End  = "00000002-0000-4000-8000-000000000006"
	turn3End  = "00000003-0000-4000-8000-000000000004"
	sdkForkAt = "5e55a0b1.sdk-forkSession-upTo-00000002-0000-4000-8000-000000000006.jsonl"
)

// upTo copies the fixture's lines up to and including the one holding
// marker into dir, as the file stood when that line was written.
func upTo(t *testing.T, dir, marker string) string {
	data, err := os.ReadFile(filepath.Join(fixtures, synthID+".jsonl"))
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		out = append(out, l)
		if marker != "" && strings.Contains(l, `"uuid":"`+marker+`"`) {
			break
		}
	}
	p := filepath.Join(dir, synthID+".jsonl")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(out, "\n")+"\n"), 0o600))
	return p
}

// docs/checkpoints.md#retention-and-clean: harness_end is the uuid of the turn's last assistant line, not
// a system line written after it.
func TestLastEntry_IsTheTurnsLastAssistantLine(t *testing.T) {
	dir := t.TempDir()
	// At Stop time of turn 2: the sidechain line written after the last
	// assistant line is skipped.
	p := upTo(t, dir, turn2End)
	e, err := LastEntry(context.Background(), p, "")
	require.NoError(t, err)
	assert.Equal(t, turn2End, e.UUID)
	assert.Equal(t, "2.1.332", e.Version)

	// The whole file ends with a stop_hook_summary system line and meta
	// lines without uuid: the answer is the assistant line before them.
	all := upTo(t, dir, "")
	e, err = LastEntry(context.Background(), all, "")
	require.NoError(t, err)
	assert.Equal(t, turn3End, e.UUID)
}

// A turn whose model call failed before any answer has no assistant line:
// it ends at its own last chain entry, never at the turn before's.
func TestLastEntry_TurnWithoutAnAssistantLine(t *testing.T) {
	dir := t.TempDir()
	p := upTo(t, dir, "00000003-0000-4000-8000-000000000001")
	e, err := LastEntry(context.Background(), p, "")
	require.NoError(t, err)
	assert.Equal(t, "00000003-0000-4000-8000-000000000001", e.UUID)
}

func TestLastEntry_BeforeANewPrompt(t *testing.T) {
	dir := t.TempDir()
	p := upTo(t, dir, "00000003-0000-4000-8000-000000000002")
	var prompt3 string
	data, _ := os.ReadFile(p)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"uuid":"00000003-0000-4000-8000-000000000001"`) {
			var m struct {
				PromptID string `json:"promptId"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			prompt3 = m.PromptID
		}
	}
	require.NotEmpty(t, prompt3)
	e, err := LastEntry(context.Background(), p, prompt3)
	require.NoError(t, err)
	assert.Equal(t, turn2End, e.UUID, "turn 2's last assistant line, not the stop_hook_summary after it")

	// The prompt is not written yet: everything is the old turn's.
	e, err = LastEntry(context.Background(), upTo(t, dir, turn2End), "not-yet-written")
	require.NoError(t, err)
	assert.Equal(t, turn2End, e.UUID)
}

func TestLastEntry_RealTranscript(t *testing.T) {
	e, err := LastEntry(context.Background(), filepath.Join(fixtures, "real-2.1.332-7ed25220-ebd9-4d8a-a85d-0225263a02da.jsonl"), "")
	require.NoError(t, err)
	assert.NotEmpty(t, e.UUID)
	assert.Equal(t, "2.1.332", e.Version)
}

type shape struct {
	Type       string
	Old        string
	ParentOld  string
	HasRequest bool
}

// shapeOf describes a forked file by the source lines it copies, so two
// forks with different random uuids compare equal.
func shapeOf(t *testing.T, path string) (lines []shape, title string) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	byNew := map[string]string{}
	type raw struct {
		Type        string  `json:"type"`
		UUID        string  `json:"uuid"`
		ParentUUID  *string `json:"parentUuid"`
		SessionID   string  `json:"sessionId"`
		CustomTitle string  `json:"customTitle"`
		ReqSession  *string `json:"requestSessionId"`
		ForkedFrom  *struct {
			SessionID   string `json:"sessionId"`
			MessageUUID string `json:"messageUuid"`
		} `json:"forkedFrom"`
	}
	var rs []raw
	var session string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r raw
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		if session == "" {
			session = r.SessionID
		}
		assert.Equal(t, session, r.SessionID, "every line carries the new session id")
		rs = append(rs, r)
		if r.ForkedFrom != nil {
			assert.Equal(t, synthID, r.ForkedFrom.SessionID)
			byNew[r.UUID] = r.ForkedFrom.MessageUUID
		}
	}
	for _, r := range rs {
		s := shape{Type: r.Type, HasRequest: r.ReqSession != nil}
		if r.ForkedFrom != nil {
			s.Old = r.ForkedFrom.MessageUUID
		}
		if r.ParentUUID != nil {
			s.ParentOld = byNew[*r.ParentUUID]
		}
		if r.Type == "custom-title" {
			title = r.CustomTitle
			continue
		}
		lines = append(lines, s)
	}
	return lines, title
}

func TestFork_MatchesTheSDK(t *testing.T) {
	dir := t.TempDir()
	src := upTo(t, dir, "")
	before, _ := os.ReadFile(src)
	newID := NewSessionID()
	dst, err := Fork(src, turn2End, newID, time.Now())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, newID+".jsonl"), dst)
	after, _ := os.ReadFile(src)
	assert.Equal(t, before, after, "the source is never modified")
	fi, err := os.Stat(dst)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	got, gotTitle := shapeOf(t, dst)
	want, wantTitle := shapeOf(t, filepath.Join(fixtures, sdkForkAt))
	require.Len(t, want, 12, "11 chain lines and tools-used, as the SDK wrote them")
	assert.Equal(t, want, got)
	assert.Equal(t, wantTitle, gotTitle)
	assert.Equal(t, "hello.txt work (fork)", gotTitle)

	// A fork of the fork, at turn 1's end, finds the anchor through forkedFrom.
	second := NewSessionID()
	dst2, err := Fork(dst, turn1End, second, time.Now())
	require.NoError(t, err)
	lines, _ := shapeOf2(t, dst2)
	require.NotEmpty(t, lines)
	u, err := Resolve(dst, turn1End)
	require.NoError(t, err)
	assert.Equal(t, u, lines[len(lines)-1], "the second fork ends at turn 1's last entry")

	_, err = Fork(src, "00000000-0000-4000-8000-00000000dead", NewSessionID(), time.Now())
	assert.True(t, IsNoAnchor(err))
	_, err = Fork(src, turn2End, newID, time.Now())
	assert.Error(t, err, "an existing session is never overwritten")
}

// shapeOf2 lists the messageUuids of a fork of a fork (its forkedFrom names
// the first fork).
func shapeOf2(t *testing.T, path string) ([]string, string) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			ForkedFrom *struct {
				MessageUUID string `json:"messageUuid"`
			} `json:"forkedFrom"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		if r.ForkedFrom != nil {
			out = append(out, r.ForkedFrom.MessageUUID)
		}
	}
	return out, ""
}

func TestProjectDir(t *testing.T) {
	assert.Equal(t, "/c/projects/-tmp-hz-ccproj", ProjectDir("/c", "/tmp/hz/ccproj"))
	assert.Equal(t, "/c/projects/-home-u-my-proj", ProjectDir("/c", "/home/u/my.proj"))
	long := "/" + strings.Repeat("a", 250)
	d := filepath.Base(ProjectDir("/c", long))
	assert.True(t, strings.HasPrefix(d, "-"+strings.Repeat("a", 199)+"-"), d)
	assert.Equal(t, "0", base36(0))
}

// A real 2.1.332 transcript (tests/realclaude_test.go's session, with the
// request logs and long listings trimmed) where another Stop hook's
// stop_hook_summary system line follows each turn's last assistant line.
// Read after that line was written (a turn ended at the next prompt, or
// by a rollback after its harness exited), harness_end is still the
// assistant line.
func TestLastEntry_RealTranscriptWithATrailingSystemLine(t *testing.T) {
	p := filepath.Join(fixtures, "real-2.1.332-stop-hook-summary-faf26d16-676a-48c1-a559-f553e8e47bdb.jsonl")
	e, err := LastEntry(context.Background(), p, "")
	require.NoError(t, err)
	assert.Equal(t, "c91976fb-49ce-4d6a-a6a3-5381d0046b9f", e.UUID, "turn 2's last assistant line, not 0b1cec0b (system)")
	assert.Equal(t, "2.1.332", e.Version)
	e, err = LastEntry(context.Background(), p, "66494ea2-90f8-4947-9162-eb2d1cc1cf79")
	require.NoError(t, err)
	assert.Equal(t, "c5ebe128-7448-4007-a11b-9a978d096220", e.UUID, "turn 1's, not ce7a89e2 (system)")
}
