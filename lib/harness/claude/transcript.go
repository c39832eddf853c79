// Package claude is git-venom's Claude Code side: transcripts (a turn's
// rewind anchor), forking a session as the Agent SDK does, and the rewind
// adapter (docs/rollback.md#conversation). The transcript has no official
// schema: this follows Claude Code 2.1.332 and the SDK 0.3.332's parser
// (tests/testdata/hooks).
package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/statefile"
)

// Line is the part of a transcript line git-venom reads.
type Line struct {
	Type        string          `json:"type"`
	UUID        *string         `json:"uuid"`
	ParentUUID  *string         `json:"parentUuid"`
	IsSidechain bool            `json:"isSidechain"`
	PromptID    string          `json:"promptId"`
	Version     string          `json:"version"`
	SessionID   string          `json:"sessionId"`
	Message     json.RawMessage `json:"message"`
	ForkedFrom  *struct {
		SessionID   string `json:"sessionId"`
		MessageUUID string `json:"messageUuid"`
	} `json:"forkedFrom"`
	Attachment *struct {
		SourceUUID string `json:"source_uuid"`
	} `json:"attachment"`
}

// chainTypes are the line types of the conversation chain (sdk.mjs sMe).
var chainTypes = map[string]bool{"user": true, "assistant": true, "attachment": true, "system": true, "progress": true}

// InChain reports a line of the main conversation chain.
func (l *Line) InChain() bool {
	return l.UUID != nil && *l.UUID != "" && chainTypes[l.Type] && !l.IsSidechain
}

// anchorable: a chain line a rewind may stop at. Progress lines are left
// out because forkSession drops them.
func (l *Line) anchorable() bool { return l.InChain() && l.Type != "progress" }

// isPrompt reports the line that opens a prompt: a user line whose content
// is the person's text, not a tool result.
func (l *Line) isPrompt() bool {
	if l.Type != "user" || l.PromptID == "" {
		return false
	}
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(l.Message, &m) != nil {
		return false
	}
	return len(m.Content) > 0 && m.Content[0] == '"'
}

// End is a turn's last chain entry.
type End = kind.End

// ErrNoEntry: the transcript has no chain entry to anchor to.
var ErrNoEntry = kind.ErrNoEntry

// Limits bound what reading one transcript may take, so that no file a
// payload names (a 1 GB file without a newline, say) makes a hook grow or
// run without end. Claude Code writes one line a message: a few MB at most,
// with a tool's output or an image; a long session is tens of MB, and the
// end of a turn sits near the end of the file.
type limits struct {
	block int   // bytes read at a time, from the end
	line  int   // the longest line; a longer one ends the read
	total int64 // the most bytes read back from the end
	lines int   // the most lines decoded: tiny lines cost time, not bytes
}

// A turn of a thousand tool calls is a few thousand lines.
var hookLimits = limits{block: 64 << 10, line: 8 << 20, total: 64 << 20, lines: 200_000}

// maxForwardBytes caps a transcript read whole, as a rewind's fork does:
// Claude Code itself cannot hold a longer session in one string.
const maxForwardBytes = 256 << 20

// ErrTooLarge: a transcript line, or the part of a transcript read, is
// over its cap; nothing was decided from what was read.
var ErrTooLarge = errors.New("the transcript is too large to read")

// LastEntry finds a turn's end in the transcript (harness_end,
// docs/checkpoints.md#retention-and-clean): the uuid of its last assistant
// line, skipping sidechain, uuid-less and later system lines; with no
// assistant line, its last chain entry. The turn is the file's last, or
// with before (a prompt_id just submitted) the one before that prompt.
// It opens only a regular file, reads within hookLimits, and heeds ctx.
func LastEntry(ctx context.Context, path, before string) (End, error) {
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return End{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return End{}, err
	}
	end, err := lastEntry(ctx, f, fi.Size(), hookLimits, before)
	if errors.Is(err, ErrTooLarge) {
		return End{}, fmt.Errorf("%s: %w", path, err)
	}
	return end, err
}

// turnEnd gathers, reading a turn's lines last first, its last assistant
// line and its last chain entry; it is done at the first assistant line or
// at the turn's prompt.
type turnEnd struct {
	chain, assistant *End
	done             bool
}

func (t *turnEnd) add(l *Line) {
	if t.done {
		return
	}
	e := &End{UUID: *l.UUID, Version: l.Version}
	if t.chain == nil {
		t.chain = e
	}
	if l.Type == "assistant" {
		t.assistant = e
	}
	t.done = t.assistant != nil || l.isPrompt()
}

func (t *turnEnd) end() *End {
	if t.assistant != nil {
		return t.assistant
	}
	return t.chain
}

func lastEntry(ctx context.Context, r io.ReaderAt, size int64, lim limits, before string) (End, error) {
	// tail is the turn the file ends with, the answer unless before is
	// found; turn is the one before that prompt.
	var tail, turn turnEnd
	passed := before == ""
	err := backwards(ctx, r, size, lim, func(raw []byte) bool {
		var l Line
		if json.Unmarshal(raw, &l) != nil || !l.anchorable() {
			return true
		}
		if passed {
			turn.add(&l)
			return !turn.done
		}
		if l.isPrompt() && l.PromptID == before {
			passed = true
			return true
		}
		tail.add(&l)
		return true
	})
	if err != nil {
		return End{}, err
	}
	found := turn.end()
	if !passed {
		// The new prompt is not in the file yet: everything is the old turn's.
		found = tail.end()
	}
	if found == nil {
		return End{}, ErrNoEntry
	}
	return *found, nil
}

// backwards calls fn with each line of the size bytes of r, last first,
// trimmed and skipping blank ones, until fn returns false. It reads
// lim.block bytes at a time into one buffer whose end holds the line being
// put together, so a long line costs its length once, not once a block. A
// line longer than lim.line, more than lim.total bytes to read or more than
// lim.lines lines end it with ErrTooLarge; so does ctx ending, with ctx's
// error.
func backwards(ctx context.Context, r io.ReaderAt, size int64, lim limits, fn func([]byte) bool) error {
	var buf []byte // buf[start:] is the partial line: read, not yet passed to fn
	start, count := 0, 0
	give := func(line []byte) (more bool, err error) {
		if len(line) == 0 {
			return true, nil
		}
		if count++; count > lim.lines {
			return false, fmt.Errorf("%w: no answer in its last %d lines", ErrTooLarge, lim.lines)
		}
		return fn(line), nil
	}
	for pos := size; pos > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if size-pos >= lim.total {
			return fmt.Errorf("%w: no answer in its last %d bytes", ErrTooLarge, lim.total)
		}
		n := lim.block
		if pos < int64(n) {
			n = int(pos)
		}
		if start < n { // no room before the partial line: grow, keeping it at the end
			// Doubling, but never past the longest line and a block: the
			// partial line is within lim.line here.
			partial := buf[start:]
			grown := make([]byte, min(max(2*len(buf), len(partial)+n), lim.line+lim.block))
			start = len(grown) - len(partial)
			copy(grown[start:], partial)
			buf = grown
		}
		pos -= int64(n)
		start -= n
		if _, err := r.ReadAt(buf[start:start+n], pos); err != nil {
			return err
		}
		rest := buf[start:]
		for {
			// Only the block just read can hold a newline: the partial
			// line after it has none.
			i := bytes.LastIndexByte(rest[:min(n, len(rest))], '\n')
			if i < 0 {
				break
			}
			if len(rest)-i-1 > lim.line {
				return fmt.Errorf("%w: a line is over %d bytes", ErrTooLarge, lim.line)
			}
			if more, err := give(bytes.TrimSpace(rest[i+1:])); !more {
				return err
			}
			rest = rest[:i]
		}
		if len(rest) > lim.line {
			return fmt.Errorf("%w: a line is over %d bytes", ErrTooLarge, lim.line)
		}
		start = len(buf) - len(rest)
		copy(buf[start:], rest)
	}
	_, err := give(bytes.TrimSpace(buf[start:]))
	return err
}

// ConfigDir is Claude Code's configuration folder: CLAUDE_CONFIG_DIR, else
// ~/.claude.
func ConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(getenv("HOME"), ".claude")
}

// Compiled on first use, like every pattern here: a package-level regexp
// is compiled at the start of every command, which mostly needs none.
var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9]`) })

// ProjectDir is the folder of a working folder's sessions: every character
// but letters and digits becomes "-", and a name over 200 characters is cut
// and given a hash (sdk.mjs aa/ske).
func ProjectDir(configDir, cwd string) string {
	name := unsafeChars().ReplaceAllString(cwd, "-")
	if len(name) > 200 {
		name = name[:200] + "-" + base36(javaHash(cwd))
	}
	return filepath.Join(configDir, "projects", name)
}

// javaHash is the Java string hash over UTF-16 units, as sdk.mjs computes it.
func javaHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func base36(h int32) string {
	v := int64(h)
	if v < 0 {
		v = -v
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	if v == 0 {
		return "0"
	}
	var out []byte
	for v > 0 {
		out = append([]byte{digits[v%36]}, out...)
		v /= 36
	}
	return string(out)
}

// Locate finds a session's transcript: in the project folder of cwd first,
// then in any project folder (the SDK scans them the same way).
func Locate(configDir, cwd, session string) (string, error) {
	if !ValidSessionID(session) {
		return "", errors.New("not a session id: " + session)
	}
	if cwd != "" {
		p := filepath.Join(ProjectDir(configDir, cwd), session+".jsonl")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	matches, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", session+".jsonl"))
	if len(matches) > 0 {
		return matches[0], nil
	}
	return "", os.ErrNotExist
}

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// ValidSessionID: Claude Code's session ids are UUIDs.
func ValidSessionID(s string) bool { return uuidRE().MatchString(s) }

// readLines reads a transcript's lines, skipping blank ones: a regular
// file only, of at most maxForwardBytes. A rewind's fork writes every
// line again, so it holds them all; readers that look for a few lines
// use eachLine.
func readLines(path string) ([][]byte, error) {
	var out [][]byte
	err := eachLine(path, func(l []byte) bool {
		out = append(out, append([]byte(nil), l...))
		return true
	})
	return out, err
}

// eachLine calls fn with each line of a transcript that is not blank, in
// order, as it reads it (fn must not keep the slice), until fn returns
// false: a regular file only,
// of at most maxForwardBytes, no line longer than hookLimits.line. Read
// whole and split, 80 million tiny lines took 7 GB and two minutes.
func eachLine(path string, fn func([]byte) bool) error {
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, maxForwardBytes+1), 64<<10)
	var long []byte // a line longer than the reader's buffer, put together
	var read int64
	for {
		chunk, err := r.ReadSlice('\n')
		read += int64(len(chunk))
		if read > maxForwardBytes {
			return fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, maxForwardBytes)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > hookLimits.line {
				return fmt.Errorf("%s: %w: a line over %d bytes", path, ErrTooLarge, hookLimits.line)
			}
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			if len(long)+len(chunk) > hookLimits.line {
				return fmt.Errorf("%s: %w: a line over %d bytes", path, ErrTooLarge, hookLimits.line)
			}
			line = append(long, chunk...)
			long = nil
		}
		if l := bytes.TrimSpace(line); len(l) > 0 && !fn(l) {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// mayChain: a line that can be a chain entry or a prompt names a uuid.
// Checking that before decoding it passes over the lines nothing here
// reads (a file of tiny lines) at the cost of a byte search.
func mayChain(raw []byte) bool { return bytes.Contains(raw, []byte(`"uuid"`)) }

// Resolve finds the uuid, in the transcript at path, of the entry that was
// anchor when the turn ended. Sessions forked the SDK's way give every line
// a new uuid and record the old one in forkedFrom, so a turn's harness_end
// is followed through those links, across the forks' files, when it is not
// in the file as it is.
func Resolve(path, anchor string) (string, error) {
	return resolve(path, anchor, 0)
}

func resolve(path, anchor string, depth int) (string, error) {
	dir := filepath.Dir(path)
	type link struct{ uuid, session, from string }
	var forked []link
	found := ""
	err := eachLine(path, func(raw []byte) bool {
		if !mayChain(raw) {
			return true
		}
		var l Line // after the look: it escapes, an allocation a line
		if json.Unmarshal(raw, &l) != nil || !l.InChain() {
			return true
		}
		if *l.UUID == anchor || (l.Attachment != nil && l.Attachment.SourceUUID == anchor) {
			found = *l.UUID
			return false
		}
		if l.ForkedFrom != nil {
			if l.ForkedFrom.MessageUUID == anchor {
				found = *l.UUID
				return false
			}
			forked = append(forked, link{*l.UUID, l.ForkedFrom.SessionID, l.ForkedFrom.MessageUUID})
		}
		return true
	})
	if err != nil {
		return "", err
	}
	if found != "" {
		return found, nil
	}
	if depth < 8 {
		// A fork of a fork: the anchor may be an older name of a line.
		cache := map[string]map[string]bool{}
		for _, f := range forked {
			names, ok := cache[f.session]
			if !ok {
				names = map[string]bool{}
				if ValidSessionID(f.session) {
					names = olderNames(filepath.Join(dir, f.session+".jsonl"), anchor, depth+1)
				}
				cache[f.session] = names
			}
			if names[f.from] {
				return f.uuid, nil
			}
		}
	}
	return "", errAnchor(anchor)
}

// olderNames returns the uuids of the file that stand for anchor.
func olderNames(path, anchor string, depth int) map[string]bool {
	u, err := resolve(path, anchor, depth)
	if err != nil {
		return map[string]bool{}
	}
	return map[string]bool{u: true}
}

type errAnchor string

func (e errAnchor) Error() string { return "no message " + string(e) + " in the session" }

// IsNoAnchor reports Resolve's "not found".
func IsNoAnchor(err error) bool {
	var e errAnchor
	return errors.As(err, &e)
}
