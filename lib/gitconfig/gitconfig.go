// Package gitconfig parses one git config file the way git(1) does, so a
// command that only reads a few keys need not start a git process for them
// (two such processes were a third of a read-only command's time). It is a
// transcription of git's own parser (config.c: git_parse_source, get_value,
// parse_value, get_base_var, get_extended_base_var, get_next_char); any
// input git would refuse is an error, and a caller that meets an error asks
// git, which then says what is wrong.
package gitconfig

import (
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/racy"
	"github.com/git-venom/git-venom/lib/treepath"
)

// Entry is one key of a file: its full name as git prints it (section and
// key lower-cased, subsection as written), and its value. HasValue is false
// for a key written without "=", which git reads as boolean true.
type Entry struct {
	Name     string
	Value    string
	HasValue bool
}

// Bool reads e as git_config_bool reads its words: a key without "=" is
// true, an empty value false, true/yes/on and false/no/off in any case;
// known is false for anything else (a number, which callers read as they
// need, or a value git would refuse).
func (e Entry) Bool() (b, known bool) {
	if !e.HasValue {
		return true, true
	}
	switch strings.ToLower(e.Value) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	return false, false
}

// ErrSyntax is a file git would refuse to read.
var ErrSyntax = errors.New("not a config file git reads")

// ReadFile reads and parses the config file at path. A file that is not
// there has no entries, as for git: nil, nil. A file read already by this
// process, whose stat data has not moved since, is not read again: one
// command reads the same few files from several places (settings, the
// scope files, discovery, the file system monitor).
func ReadFile(path string) ([]Entry, error) {
	taken := time.Now()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		if treepath.Gone(err) {
			return nil, nil
		}
		// The read says what is wrong, as it would have.
		return readFile(path)
	}
	key := statKey(&st)
	read.Lock()
	c, ok := read.files[path]
	read.Unlock()
	if ok && c.key == key {
		return slices.Clone(c.entries), nil
	}
	entries, err := readFile(path)
	// Kept only when the stat data tells a later change apart: not changed
	// in the last second (lib/racy), and the same after the read as before.
	if err == nil && !racy.Taken(key.mtime, key.ctime, taken) && syscall.Stat(path, &st) == nil && statKey(&st) == key {
		read.Lock()
		if read.files == nil {
			read.files = map[string]readOnce{}
		}
		read.files[path] = readOnce{key: key, entries: slices.Clone(entries)}
		read.Unlock()
	}
	return entries, err
}

// parses counts the files read and parsed, for tests.
var parses atomic.Int64

func readFile(path string) ([]Entry, error) {
	text, err := os.ReadFile(path)
	if treepath.Gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	parses.Add(1)
	return Parse(text)
}

// read holds the files ReadFile parsed, by path.
var read struct {
	sync.Mutex
	files map[string]readOnce
}

type readOnce struct {
	key     fileKey
	entries []Entry
}

// fileKey is the stat data that moves when a file is written or replaced.
type fileKey struct {
	dev, ino           uint64
	size, mtime, ctime int64
	mode               uint32
}

func statKey(st *syscall.Stat_t) fileKey {
	return fileKey{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), mode: st.Mode}
}

// Parse reads a config file's text into its entries, in file order.
func Parse(text []byte) ([]Entry, error) {
	p := &parser{b: text}
	return p.parse()
}

type parser struct {
	b   []byte
	i   int
	eof bool
}

// next is get_next_char: "\r\n" reads as "\n", and the end of the input as
// a last "\n" with eof set.
func (p *parser) next() byte {
	if p.i >= len(p.b) {
		p.eof = true
		return '\n'
	}
	c := p.b[p.i]
	p.i++
	if c == '\r' && p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
		return '\n'
	}
	return c
}

// git's sane_ctype, which is ASCII only.
func isSpace(c byte) bool   { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool   { return isAlpha(c) || c >= '0' && c <= '9' }
func isKeyChar(c byte) bool { return isAlnum(c) || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (p *parser) parse() ([]Entry, error) {
	var out []Entry
	// A NUL would be read by git's fgetc as a character; not worth
	// following.
	for _, c := range p.b {
		if c == 0 {
			return nil, ErrSyntax
		}
	}
	// A UTF-8 byte order mark at the start is skipped; a partial one is
	// an error.
	bom := "\xef\xbb\xbf"
	if len(p.b) > 0 && p.b[0] == bom[0] {
		if !strings.HasPrefix(string(p.b), bom) {
			return nil, ErrSyntax
		}
		p.i = len(bom)
	}
	var section strings.Builder
	haveSection := false
	comment := false
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment || isSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			section.Reset()
			if !p.baseVar(&section) || section.Len() < 1 {
				return nil, ErrSyntax
			}
			section.WriteByte('.')
			haveSection = true
			continue
		}
		if !isAlpha(c) {
			return nil, ErrSyntax
		}
		// git would accept a key before any section as ".key"; no file
		// we care about has one.
		if !haveSection {
			return nil, ErrSyntax
		}
		e, ok := p.value(section.String(), c)
		if !ok {
			return nil, ErrSyntax
		}
		out = append(out, e)
	}
}

// value is get_value: the rest of the key, then "= value" or the end of
// the line.
func (p *parser) value(section string, first byte) (Entry, bool) {
	var name strings.Builder
	name.WriteString(section)
	name.WriteByte(lower(first))
	var c byte
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name.WriteByte(lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	e := Entry{Name: name.String()}
	if c == '\n' {
		return e, true
	}
	if c != '=' {
		return e, false
	}
	v, ok := p.parseValue()
	e.Value, e.HasValue = v, true
	return e, ok
}

// parseValue is parse_value: quotes, the escapes \t \b \n \\ \", line
// continuation, comments, and blanks outside quotes dropped at both ends.
// Inside an unquoted value git 2.39 turns each blank into a space and later
// versions keep it; a value with a tab or CR there is left to git.
func (p *parser) parseValue() (string, bool) {
	var v []byte
	quote, comment := false, false
	trim := -1     // where trailing blanks outside quotes start, or -1
	other := false // those blanks hold a tab or CR
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			if trim >= 0 {
				v = v[:trim]
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if trim < 0 {
				trim = len(v)
			}
			if len(v) > 0 {
				v = append(v, c)
				other = other || c != ' '
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		if trim >= 0 && other {
			return "", false
		}
		trim, other = -1, false
		if c == '\\' {
			c = p.next()
			switch c {
			case '\n':
				if p.eof {
					// git reads a backslash at the very end as
					// a continuation into nothing; rare enough
					// to leave to git.
					return "", false
				}
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

// baseVar is get_base_var: "[section]", "[section.sub]" (all lower-cased)
// or `[section "sub"]`.
func (p *parser) baseVar(name *strings.Builder) bool {
	for {
		c := p.next()
		if p.eof {
			return false
		}
		if c == ']' {
			return true
		}
		if isSpace(c) {
			return p.extendedBaseVar(name, c)
		}
		if !isKeyChar(c) && c != '.' {
			return false
		}
		name.WriteByte(lower(c))
	}
}

// extendedBaseVar is get_extended_base_var: the quoted subsection, kept as
// written, with \x read as x.
func (p *parser) extendedBaseVar(name *strings.Builder, c byte) bool {
	for {
		if c == '\n' {
			return false
		}
		c = p.next()
		if !isSpace(c) {
			break
		}
	}
	if c != '"' {
		return false
	}
	name.WriteByte('.')
	for {
		c := p.next()
		if c == '\n' {
			return false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c == '\n' {
				return false
			}
		}
		name.WriteByte(c)
	}
	return p.next() == ']'
}

// harmlessGitVar names the GIT_* variables that change neither which config
// files git reads nor which repository it finds; GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM are followed as git does.
func harmlessGitVar(name string) bool {
	switch name {
	case "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_EXEC_PATH", // set by git itself when it runs git venom-*
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
		"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
		"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_TERMINAL_PROMPT", "GIT_ASKPASS",
		"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY":
		return true
	}
	return false
}

// PlainEnvironment reports whether environ holds no GIT_* variable that
// could change which repository git finds or which config it reads: then
// an in-process reading of the repository and its config is git's.
func PlainEnvironment(environ []string) bool {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !harmlessGitVar(name) {
			return false
		}
	}
	return true
}
