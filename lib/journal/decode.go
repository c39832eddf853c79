package journal

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/git-venom/git-venom/lib/worktreeid"
)

// decode reads one record into e, about five times faster than
// encoding/json on a long log (read whole by list, events and preflight).
// Anything it does not know for certain falls back to encoding/json, so
// both agree; TestDecode_AgreesWithEncodingJSON keeps the member list whole.
func decode(line []byte, e *Entry) error {
	return decodeString(string(line), e)
}

// decodeString is decode on a string: the members' strings are slices of
// it, so a record costs a few allocations, not one a member.
func decodeString(line string, e *Entry) error {
	d := decoder{b: line}
	if d.entry(e) && d.end() {
		return nil
	}
	*e = Entry{}
	return json.Unmarshal([]byte(line), e)
}

// decodeOwned is decode into strings of the record's own, for a line in a
// buffer that is read over again: none of e's strings is a slice of line.
// Strings that repeat from record to record (types, agents, reasons, trees)
// are copied once, into syms.
func decodeOwned(line []byte, e *Entry, syms *symbols, lazyRepos bool) error {
	d := decoder{b: unsafe.String(unsafe.SliceData(line), len(line)), syms: syms, lazyRepos: lazyRepos}
	if d.entry(e) && d.end() {
		return nil
	}
	*e = Entry{}
	return json.Unmarshal(line, e) // encoding/json copies every string
}

// symbols holds one copy of each repeated string, and copies the others
// into shared chunks: one allocation for a few hundred strings instead of
// one each, which is most of a 10,000-record fold's allocations.
type symbols struct {
	set   map[string]string
	chunk []byte
}

func newSymbols() *symbols { return &symbols{set: map[string]string{}} }

// symbolChunk is the size of the chunks strings are copied into; a string
// keeps its whole chunk alive, so longer strings get their own allocation.
const symbolChunk = 16 << 10

func (s *symbols) of(b string) string {
	if v, ok := s.set[b]; ok {
		return v
	}
	v := s.own(b)
	s.set[v] = v
	return v
}

// own returns a copy of b.
func (s *symbols) own(b string) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > symbolChunk/16 {
		return strings.Clone(b)
	}
	if cap(s.chunk)-len(s.chunk) < len(b) {
		s.chunk = make([]byte, 0, symbolChunk)
	}
	start := len(s.chunk)
	s.chunk = append(s.chunk, b...)
	return unsafe.String(&s.chunk[start], len(b))
}

type decoder struct {
	b string
	i int
	// syms, when set, makes the decoder copy its strings out of b: the
	// repeated ones (sym) once, the others each (own).
	syms *symbols
	// lazyRepos keeps a checkpoint's repos as JSON text (Entry.ReposJSON)
	// instead of decoding them: see ScanOptions.LazyRepos.
	lazyRepos bool
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

func (d *decoder) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *decoder) eat(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) null() bool {
	d.ws()
	if len(d.b)-d.i >= 4 && d.b[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// object calls member for each key, with the cursor on the value.
func (d *decoder) object(member func(key string) bool) bool {
	if !d.eat('{') {
		return false
	}
	if d.eat('}') {
		return true
	}
	for {
		key, ok := d.rawString()
		if !ok || !d.eat(':') || !member(key) {
			return false
		}
		if d.eat(',') {
			continue
		}
		return d.eat('}')
	}
}

// rawString returns a string's bytes when it has no escapes and is ASCII
// or valid UTF-8; anything else is left to the slow path except escapes,
// which string() handles.
func (d *decoder) rawString() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\':
			return "", false
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		d.i++
	}
	return "", false
}

func (d *decoder) str(dst *string) bool {
	if d.null() {
		return true
	}
	save := d.i
	if s, ok := d.rawString(); ok {
		if d.syms != nil {
			s = d.syms.own(s)
		}
		*dst = s
		return true
	}
	d.i = save
	s, ok := d.escaped()
	*dst = s
	return ok
}

// sym is str for a member whose values repeat (a type, an agent, a
// reason, a tree): kept once in syms.
func (d *decoder) sym(dst *string) bool {
	if d.syms == nil {
		return d.str(dst)
	}
	if d.null() {
		return true
	}
	save := d.i
	if s, ok := d.rawString(); ok {
		*dst = d.syms.of(s)
		return true
	}
	d.i = save
	s, ok := d.escaped()
	*dst = s
	return ok
}

// escaped reads a string with escapes, as encoding/json writes them.
func (d *decoder) escaped() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	var out []byte
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return "", false
		}
		esc := d.b[d.i+1]
		d.i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if d.i+1 >= len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
					return "", false
				}
				d.i += 2
				r2, ok := d.hex4()
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(d.b[d.i:d.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(v), true
}

func (d *decoder) strPtr(dst **string) bool {
	if d.null() {
		*dst = nil
		return true
	}
	var s string
	if !d.str(&s) {
		return false
	}
	*dst = &s
	return true
}

func (d *decoder) integer(dst *int64) bool {
	if d.null() {
		return true
	}
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	v, err := strconv.ParseInt(d.b[start:d.i], 10, 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

func (d *decoder) integerInt(dst *int) bool {
	v := int64(*dst)
	if !d.integer(&v) {
		return false
	}
	*dst = int(v)
	return true
}

func (d *decoder) boolean(dst *bool) bool {
	if d.null() {
		return true
	}
	switch {
	case len(d.b)-d.i >= 4 && d.b[d.i:d.i+4] == "true":
		*dst, d.i = true, d.i+4
	case len(d.b)-d.i >= 5 && d.b[d.i:d.i+5] == "false":
		*dst, d.i = false, d.i+5
	default:
		return false
	}
	return true
}

func (d *decoder) boolPtr(dst **bool) bool {
	if d.null() {
		*dst = nil
		return true
	}
	var v bool
	if !d.boolean(&v) {
		return false
	}
	*dst = &v
	return true
}

// array calls item for each element; a null leaves *isNil true.
func (d *decoder) array(isNil func(), item func() bool) bool {
	if d.null() {
		isNil()
		return true
	}
	if !d.eat('[') {
		return false
	}
	if d.eat(']') {
		return true
	}
	for {
		if !item() {
			return false
		}
		if d.eat(',') {
			continue
		}
		return d.eat(']')
	}
}

func (d *decoder) strings(dst *[]string) bool {
	list := []string{}
	ok := d.array(func() { list = nil }, func() bool {
		var s string
		if !d.str(&s) {
			return false
		}
		list = append(list, s)
		return true
	})
	*dst = list
	return ok
}

func (d *decoder) entry(e *Entry) bool {
	return d.object(func(k string) bool {
		switch k {
		case "seq":
			return d.integer(&e.Seq)
		case "ts":
			return d.str(&e.Ts)
		case "type":
			return d.sym(&e.Type)
		case "agent":
			return d.sym(&e.Agent)
		case "tree":
			return d.sym(&e.Tree)
		case "isolation":
			return d.sym(&e.Isolation)
		case "harness":
			return d.sym(&e.Harness)
		case "parent":
			return d.strPtr(&e.Parent)
		case "worktree":
			return d.worktree(&e.Worktree)
		case "turn":
			return d.strPtr(&e.Turn)
		case "harness_turn":
			return d.str(&e.HarnessTurn)
		case "harness_end":
			return d.sym(&e.HarnessEnd)
		case "harness_version":
			return d.sym(&e.HarnessVersion)
		case "no_start":
			return d.boolean(&e.NoStart)
		case "no_end":
			return d.boolean(&e.NoEnd)
		case "paths":
			return d.strings(&e.Paths)
		case "ignored":
			return d.strings(&e.Ignored)
		case "harness_session":
			return d.strPtr(&e.HarnessSession)
		case "fork_source":
			return d.str(&e.ForkSource)
		case "fork_at":
			return d.str(&e.ForkAt)
		case "harness_pid":
			return d.integer(&e.PID)
		case "harness_start":
			return d.integer(&e.Start)
		case "dropped":
			return d.strings(&e.Dropped)
		case "checkpoint":
			return d.str(&e.Checkpoint)
		case "reason":
			return d.sym(&e.Reason)
		case "through_turn":
			return d.strPtr(&e.ThroughTurn)
		case "at":
			return d.str(&e.At)
		case "mid_turn":
			return d.boolean(&e.MidTurn)
		case "overlap":
			return d.boolean(&e.Overlap)
		case "label":
			return d.strPtr(&e.Label)
		case "previous_label":
			return d.strPtr(&e.PreviousLabel)
		case "repos":
			if d.lazyRepos {
				return d.rawArray(&e.ReposJSON)
			}
			return d.repos(&e.Repos)
		case "code":
			return d.sym(&e.Code)
		case "repo":
			return d.sym(&e.Repo)
		case "checkpoints":
			return d.strings(&e.Checkpoints)
		case "source":
			return d.sym(&e.Source)
		case "removed":
			return d.integerInt(&e.Removed)
		case "kept":
			return d.integerInt(&e.Kept)
		case "safety":
			return d.str(&e.Safety)
		case "restore":
			return d.sym(&e.Restore)
		case "ok":
			return d.boolPtr(&e.OK)
		case "after":
			return d.str(&e.After)
		case "unseen":
			return d.strings(&e.Unseen)
		case "drops":
			return d.strings(&e.Drops)
		case "plan":
			return d.str(&e.Plan)
		case "copy":
			return d.str(&e.Copy)
		case "revert":
			return d.str(&e.Revert)
		case "mark":
			return d.str(&e.Mark)
		case "tool":
			return d.sym(&e.Tool)
		case "command":
			return d.str(&e.Command)
		case "tool_use_id":
			return d.str(&e.ToolUseID)
		}
		return false // a member this decoder does not know: the slow path
	})
}

// objects decodes an array of objects (or null) into dst, each member of
// each object through member, which reports false for a member it does not
// know.
func objects[T any](d *decoder, dst *[]T, member func(v *T, key string) bool) bool {
	list := []T{}
	ok := d.array(func() { list = nil }, func() bool {
		var v T
		if !d.object(func(k string) bool { return member(&v, k) }) {
			return false
		}
		list = append(list, v)
		return true
	})
	*dst = list
	return ok
}

// rawArray passes over an array (or null), keeping its text in dst
// (copied when the decoder owns its strings). It follows only brackets and
// strings; the text is decoded, and checked, by DecodeRepos.
func (d *decoder) rawArray(dst *string) bool {
	if d.null() {
		*dst = ""
		return true
	}
	d.ws()
	start, depth := d.i, 0
	if start >= len(d.b) || d.b[start] != '[' {
		return false
	}
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case '"':
			for d.i++; d.i < len(d.b) && d.b[d.i] != '"'; d.i++ {
				if d.b[d.i] == '\\' {
					d.i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
		d.i++
		if depth == 0 {
			break
		}
	}
	if depth != 0 {
		return false
	}
	raw := d.b[start:d.i]
	if d.syms != nil {
		raw = d.syms.own(raw)
	}
	*dst = raw
	return true
}

// DecodeRepos decodes the repos of a checkpoint.taken record that a scan
// kept as text (Entry.ReposJSON).
func DecodeRepos(text string) ([]RepoState, error) {
	var out []RepoState
	d := decoder{b: text}
	if d.repos(&out) && d.end() {
		return out, nil
	}
	out = nil
	err := json.Unmarshal([]byte(text), &out)
	return out, err
}

func (d *decoder) worktree(dst **worktreeid.ID) bool {
	if d.null() {
		*dst = nil
		return true
	}
	w := &worktreeid.ID{}
	*dst = w
	return d.object(func(k string) bool {
		switch k {
		case "git_dir":
			return d.str(&w.GitDir)
		case "made":
			return d.str(&w.Made)
		}
		return false
	})
}

func (d *decoder) repos(dst *[]RepoState) bool {
	return objects(d, dst, func(r *RepoState, k string) bool {
		switch k {
		case "repo":
			return d.sym(&r.Repo)
		case "path":
			return d.sym(&r.Path)
		case "commit":
			return d.str(&r.Commit)
		case "head":
			return d.strPtr(&r.Head)
		case "branch":
			return d.sym(&r.Branch)
		case "skipped":
			return d.skipped(&r.Skipped)
		case "submodules":
			return d.submodules(&r.Submodules)
		}
		return false
	})
}

func (d *decoder) skipped(dst *[]Skipped) bool {
	return objects(d, dst, func(s *Skipped, k string) bool {
		switch k {
		case "path":
			return d.str(&s.Path)
		case "path_b64":
			return d.str(&s.PathB64)
		case "bytes":
			return d.integer(&s.Bytes)
		case "reason":
			return d.str(&s.Reason)
		}
		return false
	})
}

func (d *decoder) submodules(dst *[]Submodule) bool {
	return objects(d, dst, func(s *Submodule, k string) bool {
		switch k {
		case "path":
			return d.str(&s.Path)
		case "path_b64":
			return d.str(&s.PathB64)
		case "commit":
			return d.str(&s.Commit)
		case "dirty":
			return d.boolean(&s.Dirty)
		}
		return false
	})
}
