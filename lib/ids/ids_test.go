package ids

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ValidAgent is exactly docs/checkpoints.md#agents-turns-and-states's pattern.
func TestValidAgent_IsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	cases := []string{"", "a", "0", "_", "-", "a_", "a-", "a-b_c9", "A", "aB", "a b", "a.b", "é", "a\n",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63)}
	for c := 0; c < 256; c++ {
		cases = append(cases, "x"+string(rune(c)), string([]byte{byte(c)}))
	}
	for _, s := range cases {
		assert.Equal(t, re.MatchString(s), ValidAgent(s), "%q", s)
	}
}

func TestParseName(t *testing.T) {
	good := map[string]Name{"k1": {ByID, 1, 0}, "k12": {ByID, 12, 0}, "last": {Last, 0, 0}, "~0": {Back, 0, 0},
		"~1": {Back, 1, 0}, "~10": {Back, 10, 0}, "t3": {TurnOf, 3, 0}, "t3.2": {ToolOf, 3, 2}, "t12.10": {ToolOf, 12, 10},
		// git's ancestry steps after last: ~ and ^ are one each, and add up.
		"last~1": {Back, 1, 0}, "last~": {Back, 1, 0}, "last^": {Back, 1, 0}, "last^^": {Back, 2, 0},
		"last~2^": {Back, 3, 0}, "last~0": {Back, 0, 0}, "last~12": {Back, 12, 0}}
	for s, want := range good {
		got, err := ParseName(s)
		assert.NoError(t, err, s)
		assert.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "k", "k0", "k01", "t0", "t", "~", "~-1", "~01", "~a", "Last", "last1", "K1",
		"p1", "k1x", "k99999999999999999999", "HEAD", "~1~2", "last~01", "last^2", "last~x", "last~-1",
		"last~1099511627777", "last~1099511627776~1", "lastk", "last-1",
		"t3.", "t3.0", "t3.01", "t.1", "t0.1", "t3.2.1", "t3.x", "k3.2"} {
		_, err := ParseName(s)
		assert.Error(t, err, s)
	}
}

func TestSuggest(t *testing.T) {
	for s, want := range map[string]string{
		"HEAD~1": "did you mean last~1?", "HEAD^": "did you mean last^?", "@~2": "did you mean last~2?",
		"7": "did you mean k7?", "K7": "did you mean k7?", "T3": "did you mean t3?", "LAST": "did you mean last?",
		"bogus": "", "k0": "",
	} {
		assert.Equal(t, want, Suggest(s), s)
	}
	assert.Contains(t, Suggest("/tmp"), `"/tmp"`)
	assert.Contains(t, Suggest("/tmp"), "write last~<n>")
}
