package ids

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ValidAgent is exactly CONTRACT §3's pattern.
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
