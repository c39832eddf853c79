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
	Back          // ~<n>: n back from the newest
	TurnOf        // t<n>: that turn's turn_end
)

// Name is a checkpoint as a person names it: its kind and its number.
type Name struct {
	Kind int
	N    int
}

// ParseName reads a checkpoint name: k<n>, last, ~<n> or t<n>. Which
// checkpoint it is depends on the agent (checkpoints.Resolve).
func ParseName(s string) (Name, error) {
	switch {
	case s == "last":
		return Name{Kind: Last}, nil
	case strings.HasPrefix(s, "~"):
		if s == "~0" {
			return Name{Kind: Back}, nil
		}
		if n, ok := number(s[1:]); ok {
			return Name{Kind: Back, N: n}, nil
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
	return Name{}, fmt.Errorf("%q names no checkpoint: give k<n>, last, ~<n> (n back from last) or t<n> (that turn's end)", s)
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
