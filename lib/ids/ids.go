// Package ids holds the rules for agent ids and the k<n>/t<n> ids of
// checkpoints and turns.
package ids

import (
	"fmt"
	"strconv"
	"strings"
)

// ValidAgent reports whether id is a valid agent id (docs/checkpoints.md#agents-turns-and-states):
// [a-z0-9][a-z0-9_-]{0,63}. Written out, not a regexp: compiling that one
// cost every command a millisecond at start-up.
func ValidAgent(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Checkpoint formats checkpoint number n as k<n>.
func Checkpoint(n int) string { return "k" + strconv.Itoa(n) }

// Turn formats turn number n as t<n>.
func Turn(n int) string { return "t" + strconv.Itoa(n) }

// ParseCheckpoint parses k<n>; n is at least 1.
func ParseCheckpoint(s string) (int, error) { return parse(s, "k") }

// ParseTurn parses t<n>; n is at least 1.
func ParseTurn(s string) (int, error) { return parse(s, "t") }

func parse(s, prefix string) (int, error) {
	digits, ok := strings.CutPrefix(s, prefix)
	n, good := number(digits)
	if !ok || !good {
		return 0, fmt.Errorf("%q is not of the form %s<n>", s, prefix)
	}
	return n, nil
}

// ToolCall formats the i-th marked tool call of turn n as t<n>.<i>
// (docs/checkpoints.md#tool-calls).
func ToolCall(n, i int) string { return Turn(n) + "." + strconv.Itoa(i) }

// ParseToolCall parses t<n>.<i>; n and i are at least 1.
func ParseToolCall(s string) (n, i int, err error) {
	turn, call, ok := strings.Cut(s, ".")
	n, err = ParseTurn(turn)
	i, good := number(call)
	if !ok || err != nil || !good {
		return 0, 0, fmt.Errorf("%q is not of the form t<n>.<i>", s)
	}
	return n, i, nil
}

// IsToolCall reports a well-formed t<n>.<i>.
func IsToolCall(s string) bool {
	_, _, err := ParseToolCall(s)
	return err == nil
}

// ToolRefName is the ref that holds the capture of tool call t<n>.<i> of
// agent (docs/checkpoints.md#tool-calls).
func ToolRefName(agent string, n, i int) string {
	return ToolRefPrefix(agent) + strconv.Itoa(n) + "/" + strconv.Itoa(i)
}

// ToolRefPrefix is the namespace of one agent's tool-call refs.
func ToolRefPrefix(agent string) string { return "refs/venom/tools/" + agent + "/" }

// MaxN is the largest checkpoint or turn number: far past any agent's
// history, and far enough below the int range that the next number after
// one a caller gives (--turn) cannot wrap around to a negative one.
const MaxN = 1 << 40

// number reads a decimal of at least 1 and at most MaxN with no leading
// zero.
func number(digits string) (int, bool) {
	if digits == "" || digits[0] == '0' || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n >= 1 && n <= MaxN
}

// Kinds of checkpoint name (docs/checkpoints.md#names).
const (
	ByID   = iota // k<n>
	Last          // last: the newest
	Back          // last~<n> (or ~<n>): n back from the newest
	TurnOf        // t<n>: that turn's turn_end
	ToolOf        // t<n>.<i>: just before that marked tool call (N, I)
)

// NameForms says how a checkpoint can be named, for errors and hints.
const NameForms = "k<n>, last, last~<n> (n back from last), t<n> (that turn's end), t<n>.<i> (just before that tool call) or a label"

// FormsHint is NameForms as a hint line within 80 columns.
const FormsHint = "give k<n>, last, last~<n> (n back), t<n> (turn end), t<n>.<i> or a label"

// Name is a checkpoint as a person names it: its kind and its number.
type Name struct {
	Kind int
	N    int
	I    int // ToolOf's call
}

// ParseName reads a checkpoint name: k<n>, last, last~<n> or t<n>. As in
// git's revisions, last^ is last~1, last~ too, and steps add up (last~2^
// is last~3). ~<n> alone is last~<n>, kept as it was: shells expand an
// unquoted ~1 from their folder stack, so the documents write last~1. Which checkpoint a
// name is depends on the agent (checkpoints.Resolve).
func ParseName(s string) (Name, error) {
	switch {
	case s == "last":
		return Name{Kind: Last}, nil
	case s == "~0":
		return Name{Kind: Back}, nil
	case strings.HasPrefix(s, "~"):
		if n, ok := number(s[1:]); ok {
			return Name{Kind: Back, N: n}, nil
		}
	case strings.HasPrefix(s, "last~"), strings.HasPrefix(s, "last^"):
		if n, ok := steps(s[len("last"):]); ok {
			return Name{Kind: Back, N: n}, nil
		}
	case strings.HasPrefix(s, "t") && strings.Contains(s, "."):
		if n, i, err := ParseToolCall(s); err == nil {
			return Name{Kind: ToolOf, N: n, I: i}, nil
		}
	case strings.HasPrefix(s, "t"):
		if n, err := ParseTurn(s); err == nil {
			return Name{Kind: TurnOf, N: n}, nil
		}
	default:
		if n, err := ParseCheckpoint(s); err == nil {
			return Name{Kind: ByID, N: n}, nil
		}
	}
	return Name{}, fmt.Errorf("%q names no checkpoint: give %s", s, NameForms)
}

// steps adds up git's ancestry steps: ~<n> is n back, ~ and ^ one each
// (~0 is none, as in git).
func steps(s string) (int, bool) {
	total := 0
	for s != "" {
		op := s[0]
		s = s[1:]
		if op != '~' && op != '^' {
			return 0, false
		}
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n := 1
		switch {
		case i > 0 && op == '^':
			return 0, false // ^<n> picks a parent in git: no meaning here
		case i > 0 && s[:i] == "0":
			n = 0
		case i > 0:
			var ok bool
			if n, ok = number(s[:i]); !ok {
				return 0, false
			}
		}
		s = s[i:]
		if total += n; total > MaxN {
			return 0, false
		}
	}
	return total, true
}

// Suggest is a hint for a name ParseName refused, or "": the name a git
// user most likely meant (HEAD~1 for last~1, 7 for k7), or, for a path,
// that the shell expanded an unquoted ~<n> from its folder stack.
func Suggest(s string) string {
	if strings.HasPrefix(s, "/") {
		return "the shell turned an unquoted ~<n> into the folder " + strconv.Quote(s) +
			" (its folder stack, pushd): write last~<n>, or quote it: '~1'"
	}
	try := []string{strings.ToLower(s), "k" + s}
	for _, head := range []string{"HEAD", "head", "@"} {
		if rest, ok := strings.CutPrefix(s, head); ok {
			try = append(try, "last"+rest)
		}
	}
	for _, t := range try {
		if t == s {
			continue
		}
		if _, err := ParseName(t); err == nil {
			return "did you mean " + t + "?"
		}
	}
	return ""
}

// RefName is the ref of checkpoint n of agent (docs/checkpoints.md#refs). A fetched copy's
// id, <remote>/<machine>/<agent> (lib/share), is no agent id: its refs are
// the ones fetch wrote under refs/venom/remotes/.
func RefName(agent string, n int) string {
	return RefPrefix(agent) + strconv.Itoa(n)
}

// RefPrefix is the namespace of one agent's refs, with a trailing slash.
func RefPrefix(agent string) string {
	if strings.Contains(agent, "/") {
		return "refs/venom/remotes/" + agent + "/"
	}
	return "refs/venom/checkpoints/" + agent + "/"
}
