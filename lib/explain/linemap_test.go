package explain

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeptLines checks every mapping against the lines themselves and,
// for random edits, that as many lines are kept as a plain LCS keeps.
func TestKeptLines(t *testing.T) {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	cases := []struct{ a, b, want string }{
		{"x,y,z", "x,y,z", "0 1 2"},
		{"", "a,b", "- -"},
		{"a,b", "", ""},
		{"a,b,c", "a,x,c", "0 - 2"},
		{"a,b,c,d", "b,c,e,d", "1 2 - 3"},
		{"a,a,b", "a,b,a", "0 2 -"},
	}
	for _, c := range cases {
		got := keptLines(split(c.a), split(c.b))
		var parts []string
		for _, i := range got {
			if i < 0 {
				parts = append(parts, "-")
			} else {
				parts = append(parts, string(rune('0'+i)))
			}
		}
		assert.Equal(t, c.want, strings.Join(parts, " "), "%s -> %s", c.a, c.b)
	}
	rng := rand.New(rand.NewSource(7))
	for n := 0; n < 300; n++ {
		a := make([]string, rng.Intn(40))
		for i := range a {
			a[i] = string(rune('a' + rng.Intn(4)))
		}
		b := make([]string, rng.Intn(40))
		for i := range b {
			b[i] = string(rune('a' + rng.Intn(4)))
		}
		got := keptLines(a, b)
		kept, last := 0, -1
		for j, i := range got {
			if i >= 0 {
				assert.Equal(t, a[i], b[j])
				assert.Greater(t, i, last, "kept lines keep their order")
				last = i
				kept++
			}
		}
		assert.Equal(t, lcs(a, b), kept, "%v -> %v", a, b)
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}
