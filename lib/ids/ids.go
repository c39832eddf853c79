// Package ids holds the rules for agent ids and the k<n>/t<n> ids of
// checkpoints and turns.
package ids

import (
	"fmt"
	"strconv"
	"strings"
)

// ValidAgent reports whether id is a valid agent id (CONTRACT §3):
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
	if !strings.HasPrefix(s, prefix) || len(s) == len(prefix) {
		return 0, fmt.Errorf("%q is not of the form %s<n>", s, prefix)
	}
	digits := s[len(prefix):]
	if digits[0] == '0' || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not of the form %s<n>", s, prefix)
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not of the form %s<n>", s, prefix)
	}
	return n, nil
}

// RefName is the ref of checkpoint n of agent (RFC 5.1).
func RefName(agent string, n int) string {
	return "refs/venom/checkpoints/" + agent + "/" + strconv.Itoa(n)
}

// RefPrefix is the namespace of one agent's refs, with a trailing slash.
func RefPrefix(agent string) string { return "refs/venom/checkpoints/" + agent + "/" }
